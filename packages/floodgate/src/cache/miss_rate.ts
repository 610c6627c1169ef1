/**
 * The share of recent L2 reads that found no value, as an exponentially weighted moving mean
 * (each read weighs `weight`; about the last 1 / weight reads count). It starts at 0: a new
 * cache reads with plain GETs until misses are shown to be the norm.
 */
export class MissRate {
  private mean = 0

  /** @param weight the newest read's weight, in (0, 1]. */
  constructor(private readonly weight: number) {}

  /** Records one L2 read: `missed` when it found no value (or one past its stale grace). */
  note(missed: boolean): void {
    this.mean += ((missed ? 1 : 0) - this.mean) * this.weight
  }

  /** The share of recent reads that missed, in [0, 1]. */
  get value(): number {
    return this.mean
  }
}
