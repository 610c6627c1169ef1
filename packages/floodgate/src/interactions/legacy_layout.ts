import { KeySpace } from '../redis/key_space.js'

/**
 * The interaction key layout before layout 2 (floodgate ≤ 2026-12-03), read only to migrate away
 * from it: 16 partitions tagged `{ix:<p>}` (item `i` in partition `i mod 16`), one SET per item
 * and kind, one dedupe key per viewer, and the data-loss marker `<prefix>:epoch`.
 *
 * | key | type |
 * |---|---|
 * | `<prefix>:ix:{ix:<p>}:stream` | STREAM of events, consumer group `flush` |
 * | `<prefix>:ix:{ix:<p>}:likes:<itemId>`, `…:favorites:…`, `…:plays:…`, `…:seen:…` | item state |
 * | `<prefix>:rank:{ix:<p>}:…` | ranking shards |
 * | `<prefix>:epoch` | STRING, data-loss marker |
 *
 * The dead-letter streams `<prefix>:ix:{ix:<p>}:dead` are not part of what the migration removes:
 * they hold entries an operator must still look at.
 */
export class LegacyInteractionKeys {
  /** Partitions of the legacy layout looked at: its default 16, or more (see the constructor). */
  readonly partitions: number
  private readonly space: KeySpace

  /**
   * @param partitions the partition count layout 2 runs with: the legacy layout is taken to have
   *   had max(16, partitions), its default or the same explicit setting (a deployment that lowered
   *   an explicit count in the same upgrade must drain by hand: docs/operations.md).
   * @throws {InvalidArgumentError} on an empty prefix.
   */
  constructor(prefix: string, partitions = 16) {
    this.space = new KeySpace(prefix)
    this.partitions = Math.max(16, partitions)
  }

  /** The event stream of legacy partition `p`. */
  stream(p: number): string {
    return this.space.tagged('ix', `ix:${p}`, 'stream')
  }

  /** The dead-letter stream of legacy partition `p` (kept by the migration). */
  dead(p: number): string {
    return this.space.tagged('ix', `ix:${p}`, 'dead')
  }

  /**
   * SCAN patterns that together match every legacy key (item state, ranking shards, streams):
   * two, whatever the partition count, so a cleanup walks the keyspace twice, not per partition.
   * They match layout 2's keys too (`{ix:<p>.<s>}`): keep only keys {@link legacyPartitionOf} names.
   */
  scanPatterns(): string[] {
    const prefix = this.space.prefix
    return [`${prefix}:ix:{ix:*`, `${prefix}:rank:{ix:*`]
  }

  /**
   * The legacy partition of `key` (its tag is `{ix:<digits>}`), or undefined for any other key,
   * layout 2's among them.
   */
  legacyPartitionOf(key: string): number | undefined {
    const prefix = this.space.prefix
    if (!key.startsWith(`${prefix}:ix:{ix:`) && !key.startsWith(`${prefix}:rank:{ix:`)) return undefined
    const tag = /^:(?:ix|rank):\{ix:(\d+)\}:/.exec(key.slice(prefix.length))
    return tag ? Number(tag[1]) : undefined
  }

  /** Whether `key` (a legacy key) is a per-minute trending bucket (`…:rank:{ix:<p>}:min:<metric>:<minute>`). */
  isMinuteBucket(key: string): boolean {
    return /^:rank:\{ix:\d+\}:min:/.test(key.slice(this.space.prefix.length))
  }

  /** Where a minute bucket is moved before its entries are carried over (same slot, one mover). */
  moving(bucket: string): string {
    return bucket.replace(':min:', ':moving:')
  }

  /** The legacy data-loss marker. */
  epoch(): string {
    return `${this.space.prefix}:epoch`
  }

  /** Every legacy partition number. */
  allPartitions(): number[] {
    return Array.from({ length: this.partitions }, (_, p) => p)
  }
}
