/**
 * At most one log line per reason per `intervalMs`, so an outage that answers every request from a
 * fallback logs a line every interval, not one per request; events and metrics still count each.
 * Units: ms.
 */
export class LogThrottle<Reason = string> {
  private readonly last = new Map<Reason, { atMs: number; suppressed: number }>()

  /** @param intervalMs shortest time between two lines of one reason (ms). */
  constructor(private readonly intervalMs: number) {}

  /**
   * Whether a line for `reason` may be written at `nowMs` (ms epoch).
   * @returns `undefined` to skip it (counted as suppressed), else how many were skipped since the
   *   last line of that reason (0 for the first).
   */
  admit(reason: Reason, nowMs: number = Date.now()): number | undefined {
    const seen = this.last.get(reason)
    if (seen === undefined) {
      this.last.set(reason, { atMs: nowMs, suppressed: 0 })
      return 0
    }
    if (nowMs - seen.atMs < this.intervalMs) {
      seen.suppressed++
      return undefined
    }
    const suppressed = seen.suppressed
    seen.atMs = nowMs
    seen.suppressed = 0
    return suppressed
  }
}
