import { UNAVAILABLE } from './l2/l2_store.js'
import { userKeyOf } from './namespace/scoped_key.js'
import type { ResolvedCallOptions } from './options.js'
import type { CacheStack, Loaded, Loader, PendingEnvelope } from './stack.js'

/** A load's right to write: the data version read when it began, and its lock token ('' for none). */
export interface FillTicket {
  version: string
  token: string
}

/**
 * Writes a loaded value with fill-4.lua (in a `floodgate.cache.fill` span): only if the version
 * did not move and the token still holds the lock. The value is in this process's L1 when it was
 * written, or when Redis failed (this process just loaded it), never when a newer write won.
 * `behind`: the caller was answered already, so the value enters L1 before the fill (unless an
 * invalidation arrived since `epoch`) and leaves it if the fill finds a newer version or a lost lock.
 */
export async function fillLoaded<T>(
  stack: CacheStack<T>,
  id: string,
  value: Loaded<T>,
  envelope: PendingEnvelope,
  ticket: FillTicket,
  o: ResolvedCallOptions,
  epoch: number,
  behind = false,
): Promise<void> {
  if (behind) stack.rememberLoaded(id, value, envelope, o, epoch)
  const { bytes, physicalTtlMs, mode } = envelope
  const result = await stack.step('fill', () =>
    stack.l2.fill(id, bytes, physicalTtlMs, ticket.version, ticket.token, mode),
  )
  const kept = result === 'written' || result === UNAVAILABLE
  if (kept && !behind) stack.rememberLoaded(id, value, envelope, o, epoch)
  else if (!kept && behind) stack.l1?.delete([id])
}

/**
 * The lock holder's job, for a miss and for a stale-while-revalidate refresh alike: load, then
 * {@link fillLoaded}. When the loader (or encoding its value) fails, the lock is given up with
 * abandon-2.lua, kept `backoffMs` (ms) as a back-off when > 0, and the error is rethrown.
 * `fill: 'behind'` answers once the value is loaded (and in L1) and writes L2 after: the other
 * processes' waiters are woken by that fill as by an awaited one; its failure is a
 * `background_error` event (task `fill`). The loader waits for `o.permit`; a refused permit gives
 * the lock up as a failed loader does.
 * @throws whatever the loader throws; `PermitRefused` when `o.permit` rejects.
 */
export async function loadAndFill<T>(
  stack: CacheStack<T>,
  id: string,
  loader: Loader<T>,
  ticket: FillTicket,
  o: ResolvedCallOptions,
  epoch: number,
  backoffMs: number,
  fill: 'await' | 'behind' = 'await',
): Promise<Loaded<T>> {
  let value: Loaded<T>
  let envelope: PendingEnvelope
  try {
    value = await stack.runLoader(id, loader, o.permit)
    envelope = stack.envelope(value, o, ticket.version)
  } catch (error) {
    await stack.l2.abandon(id, ticket.token, backoffMs)
    throw error
  }
  if (fill === 'await') await fillLoaded(stack, id, value, envelope, ticket, o, epoch)
  // the caller has its value: the fill's round trip need not be on its critical path
  else
    fillLoaded(stack, id, value, envelope, ticket, o, epoch, true).catch((error: unknown) =>
      stack.events.emit('background_error', { key: userKeyOf(id), error, task: 'fill' }),
    )
  return value
}

/** Redis is unavailable: load and keep the result in this process's L1 only. */
export async function loadWithoutL2<T>(
  stack: CacheStack<T>,
  id: string,
  loader: Loader<T>,
  o: ResolvedCallOptions,
  epoch: number,
): Promise<Loaded<T>> {
  const value = await stack.runLoader(id, loader, o.permit)
  stack.rememberLoaded(id, value, stack.envelope(value, o, '0'), o, epoch)
  return value
}
