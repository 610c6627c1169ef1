import { assertItemId } from './member.js'

/**
 * Partition of an item: `itemId mod partitions` (BigInt arithmetic, so ids
 * beyond 2^53 still land right). Everything about an item shares the hash tag
 * `{<tag>}` of that partition (`InteractionKeys.tagOf`).
 * @throws {InvalidArgumentError} when the id is not a decimal integer.
 */
export function partitionOf(itemId: string, partitions: number): number {
  assertItemId(itemId)
  return Number(BigInt(itemId) % BigInt(partitions))
}
