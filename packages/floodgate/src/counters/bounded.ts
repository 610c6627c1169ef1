/**
 * Calls `fn` on every item, in order, with at most `limit` calls pending at once: the next starts
 * when one settles. Rejects with the first error once the calls already started have settled
 * (none is left running behind the caller's back); no call starts after an error.
 */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0
  let failed: { error: unknown } | undefined
  const lane = async (): Promise<void> => {
    while (failed === undefined && next < items.length) {
      const item = items[next++]!
      try {
        await fn(item)
      } catch (error) {
        failed ??= { error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, lane))
  if (failed !== undefined) throw failed.error
}
