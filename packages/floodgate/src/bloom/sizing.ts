import { InvalidArgumentError } from '../errors/index.js'
import { positiveInteger } from '../validation/index.js'

/** Bits per Redis key above which a filter is split into more shards: 2^23 bits (8 Mibit = 1 MiB). */
export const SHARD_TARGET_BITS = 2 ** 23

/** A Bloom filter's shape. */
export interface BloomSize {
  /** Total bits m (over all shards). */
  bits: number
  /** Hash functions k. */
  hashes: number
}

/**
 * Optimal size for `n` expected items at false-positive rate `p`
 * (Bloom, "Space/Time Trade-offs in Hash Coding with Allowable Errors", CACM 1970;
 * the optimum as derived in Broder & Mitzenmacher, "Network Applications of Bloom Filters", 2004):
 * `m = ⌈−n ln p / (ln 2)²⌉`, `k = max(1, round((m / n) ln 2))`.
 * @throws {InvalidArgumentError} unless `n` is an integer ≥ 1 and 0 < `p` < 1.
 */
export function bloomSize(expectedItems: number, falsePositiveRate: number): BloomSize {
  positiveInteger('expectedItems', expectedItems)
  if (!(falsePositiveRate > 0 && falsePositiveRate < 1))
    throw new InvalidArgumentError('falsePositiveRate', 'must be in (0, 1)')
  const bits = Math.ceil((-expectedItems * Math.log(falsePositiveRate)) / Math.LN2 ** 2)
  const hashes = Math.max(1, Math.round((bits / expectedItems) * Math.LN2))
  return { bits, hashes }
}

/**
 * Expected false-positive rate of an `m`-bit, `k`-hash filter holding `n`
 * items: `(1 − e^(−kn/m))^k` (Bloom 1970; standard approximation).
 */
export function expectedFalsePositiveRate(bits: number, hashes: number, items: number): number {
  return (1 - Math.exp((-hashes * items) / bits)) ** hashes
}

/** Shards for `bits` so that each holds at most {@link SHARD_TARGET_BITS}: `⌈m / 2^23⌉`. */
export function defaultShards(bits: number): number {
  return Math.max(1, Math.ceil(bits / SHARD_TARGET_BITS))
}
