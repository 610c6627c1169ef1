import { integerIn } from '../validation/index.js'
import { assertVideoId } from './member.js'

/**
 * Partition of a video: `videoId mod partitions` (BigInt arithmetic, so ids
 * beyond 2^53 still land right). Everything about a video shares the hash tag
 * `{ix:<partition>}`.
 * @throws {InvalidArgumentError} when the id is not a decimal integer.
 */
export function partitionOf(videoId: string, partitions: number): number {
  assertVideoId(videoId)
  return Number(BigInt(videoId) % BigInt(partitions))
}

/** @throws {InvalidArgumentError} unless `partitions` is an integer in [1, 16384]. */
export function assertPartitions(partitions: number): void {
  integerIn('partitions', partitions, 1, 16384)
}
