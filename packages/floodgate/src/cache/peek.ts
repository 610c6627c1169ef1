import { UNAVAILABLE } from './l2/l2_store.js'
import { isNotFound } from './not_found.js'
import type { ResolvedCallOptions } from './options.js'
import { type CacheStack, entryValue, unwrap } from './stack.js'

/**
 * `get` for one id: L1, then L2 (kept in L1 on a hit), never the loader nor the Bloom gate. Fresh
 * values only: a stale entry (past its TTL, even inside the stale-while-revalidate window), a
 * negative entry, a miss and an unreachable Redis all give `undefined`. Not counted in the outcome
 * events (those describe `getOrLoad` calls, so their hit ratio stays per load-capable call).
 */
export async function peekOne<T>(
  stack: CacheStack<T>,
  id: string,
  o: ResolvedCallOptions,
): Promise<T | undefined> {
  const now = Date.now()
  const local = stack.l1?.get(id, now)
  if (local !== undefined) return isNotFound(local.value) ? undefined : local.value
  const epoch = stack.epoch
  const entry = await stack.readEntry(id)
  if (entry === UNAVAILABLE || entry === undefined || entry.expiresAtMs <= now) return undefined
  stack.remember(id, entry, o, epoch)
  return unwrap(entryValue(entry))
}
