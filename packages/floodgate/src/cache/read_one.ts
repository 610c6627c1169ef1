import { randomUUID } from 'node:crypto'
import { tracingOn } from '../observability/index.js'
import { gateAt, passGate } from './bloom_step.js'
import type { Waiter } from './bus/wake_waiters.js'
import type { Envelope } from './envelope.js'
import { loadAndFill, loadWithoutL2 } from './fill.js'
import type { L1Entry } from './l1/l1_cache.js'
import { UNAVAILABLE, type Unavailable } from './l2/l2_store.js'
import { userKeyOf } from './namespace/scoped_key.js'
import { isNotFound } from './not_found.js'
import { CACHE_DEFAULTS, type ResolvedCallOptions } from './options.js'
import { PermitRefused } from './permit.js'
import type { Claim } from './scripts.js'
import { type CacheStack, entryValue, type Loaded, type Loader, type ReadOutcome, unwrap } from './stack.js'
import { jitteredMs } from './ttl.js'

/**
 * `getOrLoad` for one id (go-zero's cachenode style, read top to bottom). The order of steps,
 * the same as `readMany` (`read_many.ts`):
 * 1. L1;
 * 2. Bloom gate if it is in-process (`before_l2`, see `bloom_step.ts`);
 * 3. L2 (fresh: return it; stale inside grace: return it and refresh in the background);
 * 4. Bloom gate if it is remote (`after_l2`);
 * 5. singleflight → Redis lock (claim-4.lua) → the winner loads and fills; the others wait for
 *    the fill's wake-up, up to a jittered deadline, then serve stale if they have it or load
 *    without writing. Redis unavailable at 3 or 5: load, keep the result in L1 only.
 * Without a remote gate, while at least half the recent L2 reads missed (`missRate`), 3 and 5
 * begin in one round trip (read-claim-n.lua: the value, or the claim when there is none), shared
 * by the misses of the id in this process.
 * @returns the value, or `undefined` for not found.
 * @throws whatever `loader` throws (errors are never cached).
 */
export function readOne<T>(
  stack: CacheStack<T>,
  id: string,
  loader: Loader<T>,
  o: ResolvedCallOptions,
): Promise<T | undefined> {
  const now = Date.now()
  const local = readLocal(stack, id, now)
  if (local !== undefined) return Promise.resolve(unwrap(local.value))
  if (gateAt(o, 'before_l2'))
    return passGate(stack, o, [id], 'before_l2').then((passed) =>
      passed.length === 0 ? undefined : readRemote(stack, id, loader, o, now),
    )
  return readRemote(stack, id, loader, o, now)
}

/** Steps 3 to 5, after an L1 miss (and the in-process gate). */
function readRemote<T>(
  stack: CacheStack<T>,
  id: string,
  loader: Loader<T>,
  o: ResolvedCallOptions,
  now: number,
): Promise<T | undefined> {
  // A GET first, the claim after a miss: while most reads hit (a read-claim costs an L2 hit ~4×
  // the CPU of a batched GET), and with a remote gate, which sits between the read and the claim.
  if (gateAt(o, 'after_l2') || stack.missRate.value < CACHE_DEFAULTS.readClaimMissRate) {
    const epoch = stack.epoch
    if (stack.l1?.tracks)
      return stack.readEntry(id).then((entry) => afterL2(stack, id, loader, o, now, epoch, entry))
    return stack.readBytes(id).then((raw) => {
      const entry = raw === UNAVAILABLE ? raw : stack.decode(id, raw)
      // a corrupt entry: a miss once its delete is done
      if (entry instanceof Promise) return entry.then(() => loadMissing(stack, id, loader, o, undefined))
      return afterL2(stack, id, loader, o, now, epoch, entry)
    })
  }
  const load = stack.flights.join(id)
  if (load !== undefined) return shared(stack, id, loader, o, load)
  // one round trip reads L2 and, when it misses, claims the lock (read-claim-n.lua); later misses
  // of the id join it until a write of the id
  let sender = false
  return stack.reads
    .run(id, () => {
      sender = true
      return sendReadClaim(stack, id, o)
    })
    .then((outcome) => afterReadClaim(stack, id, loader, o, outcome, sender))
}

/** Sends an L1 miss's read-claim, on the tracked L1's connection while it tracks. */
function sendReadClaim<T>(stack: CacheStack<T>, id: string, o: ResolvedCallOptions): Promise<ReadOutcome> {
  const epoch = stack.epoch
  const l1 = stack.l1
  const tracked = l1?.tracks ? l1.beginRead(stack.l2.valueKey(id)) : undefined
  stack.noteLockTtl(o.lockTtlMs)
  // randomUUID draws from a buffered pool: ~0.3 µs, where randomBytes(16) cost ~8 µs per miss
  const token = randomUUID()
  // before the call: a fill's wake-up racing a `busy` reply is not lost
  const waiter = stack.waiters.register(id)
  const call = () => stack.l2.readOrClaim(id, token, o.lockTtlMs, tracked)
  return (tracingOn() ? stack.step('l2_read', call) : call()).then((reply) => ({
    reply,
    token,
    admission: l1?.settle(tracked),
    epoch,
    waiter,
  }))
}

/**
 * A read-claim's answer, for its sender and for the misses that joined it: a value is decoded by
 * each (its own copy) and served as step 3 serves it (kept in L1 by the sender only: a tracked
 * read's admission is the sender's); a claim or no reply makes the sender's load, or wait for
 * another process's, the one flight every joiner shares.
 */
function afterReadClaim<T>(
  stack: CacheStack<T>,
  id: string,
  loader: Loader<T>,
  o: ResolvedCallOptions,
  outcome: ReadOutcome,
  sender: boolean,
): T | undefined | Promise<T | undefined> {
  const { reply } = outcome
  if (sender && reply !== UNAVAILABLE) stack.missRate.note(reply.kind !== 'value')
  if (reply !== UNAVAILABLE && reply.kind === 'value') {
    if (sender) outcome.waiter.cancel()
    const entry = stack.decode(id, reply.bytes)
    // a corrupt entry: a miss once its delete is done
    if (entry instanceof Promise) return entry.then(() => loadMissing(stack, id, loader, o, undefined))
    if (entry !== undefined) {
      if (sender && outcome.admission !== undefined) entry.admission = outcome.admission
      const served = servedFromL2(stack, id, loader, o, Date.now(), outcome.epoch, entry, sender)
      if (served !== undefined) return unwrap(served)
    }
    return loadMissing(stack, id, loader, o, entry) // past grace
  }
  const load = stack.flights.join(id)
  if (!sender)
    return load !== undefined
      ? shared(stack, id, loader, o, load)
      : loadMissing(stack, id, loader, o, undefined)
  if (load !== undefined) {
    // a newer flight of the id (begun after a write forgot this read): join it, give the lock back
    outcome.waiter.cancel()
    if (reply !== UNAVAILABLE && reply.kind === 'acquired') void stack.l2.abandon(id, outcome.token, 0)
    return shared(stack, id, loader, o, load)
  }
  if (reply === UNAVAILABLE) {
    outcome.waiter.cancel()
    return shared(
      stack,
      id,
      loader,
      o,
      stack.flights.run(id, () => loadThroughLock(stack, id, loader, o, true, undefined)),
    )
  }
  const first = { claim: reply, waiter: outcome.waiter, token: outcome.token }
  return shared(
    stack,
    id,
    loader,
    o,
    stack.flights.run(id, () => loadThroughLock(stack, id, loader, o, false, undefined, first)),
  )
}

/**
 * The value of a load this call started or joined. A load that waited on a permit (`o.permit`)
 * refused: the caller whose permit it was gets the permit's reason, the others read again.
 */
function shared<T>(
  stack: CacheStack<T>,
  id: string,
  loader: Loader<T>,
  o: ResolvedCallOptions,
  load: Promise<Loaded<T>>,
): Promise<T | undefined> {
  return load.then(unwrap, (error: unknown) => {
    if (!(error instanceof PermitRefused)) throw error
    if (error.permit === o.permit) throw error.reason
    return readOne(stack, id, loader, o)
  })
}

/** Step 1: the fresh L1 entry of `id`, counted (`l1_hit` / `negative_hit`); undefined (not counted) when L1 has none. */
export function readLocal<T>(stack: CacheStack<T>, id: string, now: number): L1Entry<T> | undefined {
  const local = stack.l1?.get(id, now)
  if (local !== undefined) stack.count(isNotFound(local.value) ? 'negative_hit' : 'l1_hit', id)
  return local
}

/** Step 3's outcome: a fresh entry, or a stale one inside grace, at once; a miss goes on to 4 and 5. */
function afterL2<T>(
  stack: CacheStack<T>,
  id: string,
  loader: Loader<T>,
  o: ResolvedCallOptions,
  now: number,
  epoch: number,
  entry: Envelope<T> | undefined | Unavailable,
): T | undefined | Promise<T | undefined> {
  if (entry !== UNAVAILABLE) stack.missRate.note(entry === undefined)
  if (entry !== UNAVAILABLE && entry !== undefined) {
    const served = servedFromL2(stack, id, loader, o, now, epoch, entry, true)
    if (served !== undefined) return unwrap(served)
  }
  return loadMissing(stack, id, loader, o, entry)
}

/**
 * An L2 entry's answer: a fresh one (counted a hit; kept in L1 when `keep`), or a stale one
 * inside grace (counted `stale_served`, refreshed in the background); undefined past grace.
 */
function servedFromL2<T>(
  stack: CacheStack<T>,
  id: string,
  loader: Loader<T>,
  o: ResolvedCallOptions,
  now: number,
  epoch: number,
  entry: Envelope<T>,
  keep: boolean,
): Loaded<T> | undefined {
  if (entry.expiresAtMs > now) {
    stack.count(entry.kind === 'negative' ? 'negative_hit' : 'l2_hit', id)
    if (keep) stack.remember(id, entry, o, epoch)
    return entryValue(entry)
  }
  if (entry.expiresAtMs + o.staleWhileRevalidateMs > now) {
    stack.count('stale_served', id)
    // a refused permit starts no load, not even a refresh
    if (o.permit === undefined) refreshInBackground(stack, id, loader, o)
    else
      Promise.resolve(o.permit).then(
        () => refreshInBackground(stack, id, loader, o),
        () => {},
      )
    return entryValue(entry)
  }
  return undefined
}

/** Steps 4 and 5: the remote Bloom gate (`after_l2`), then singleflight and the lock. */
async function loadMissing<T>(
  stack: CacheStack<T>,
  id: string,
  loader: Loader<T>,
  o: ResolvedCallOptions,
  entry: Envelope<T> | undefined | Unavailable,
): Promise<T | undefined> {
  if (gateAt(o, 'after_l2') && (await passGate(stack, o, [id], 'after_l2')).length === 0) return undefined
  const stale = entry === UNAVAILABLE || entry === undefined ? undefined : entryValue(entry)
  return shared(
    stack,
    id,
    loader,
    o,
    stack.flights.run(id, () => loadThroughLock(stack, id, loader, o, entry === UNAVAILABLE, stale)),
  )
}

/**
 * A miss: become the loader (Redis lock, `floodgate.cache.lock_claim` spans), or wait for the one
 * that is (`floodgate.cache.lock_wait` spans). `redisDown`: L2 just failed; load directly.
 * `first`: the claim a read-claim took (or found held) under its token, with the wake-up it registered.
 */
async function loadThroughLock<T>(
  stack: CacheStack<T>,
  id: string,
  loader: Loader<T>,
  o: ResolvedCallOptions,
  redisDown: boolean,
  stale: Loaded<T> | undefined,
  first?: { claim: Claim; waiter: Waiter; token: string },
): Promise<Loaded<T>> {
  const epoch = stack.epoch
  if (redisDown) return loadWithoutL2(stack, id, loader, o, epoch)
  stack.noteLockTtl(o.lockTtlMs)
  // randomUUID draws from a buffered pool: ~0.3 µs, where randomBytes(16) cost ~8 µs per miss
  const token = first?.token ?? randomUUID()
  const deadline = Date.now() + jitteredMs(o.lockWaitMs, o.lockWaitJitterMs)
  let counted = false
  let given = first
  for (;;) {
    const waiter = given?.waiter ?? stack.waiters.register(id)
    const claim =
      given?.claim ?? (await stack.step('lock_claim', () => stack.l2.claim(id, token, o.lockTtlMs, 'miss')))
    given = undefined
    if (claim === UNAVAILABLE) {
      waiter.cancel()
      return loadWithoutL2(stack, id, loader, o, epoch)
    }
    if (claim.kind === 'acquired') {
      waiter.cancel()
      return loadAndFill(stack, id, loader, { version: claim.version, token }, o, epoch, 0, 'behind')
    }
    if (claim.kind === 'exists') {
      waiter.cancel()
      const landed = await readLanded(stack, id, o, epoch)
      if (landed !== undefined) return landed
    } else if (!counted) {
      counted = true
      stack.count('lock_wait', id)
    }
    const remainingMs = deadline - Date.now()
    if (remainingMs <= 0) {
      waiter.cancel()
      stack.count('wait_timeout', id)
      return stale !== undefined ? stale : stack.runLoader(id, loader, o.permit)
    }
    // Woken by the fill's PUBLISH; otherwise re-claim when the holder's lock expires (it may have
    // died). While the bus is down that wake-up cannot arrive (the bus wakes every waiter when it
    // drops and when it is back): poll instead of sitting out the deadline.
    const pttlMs = claim.kind === 'busy' ? claim.pttlMs : 0
    const untilMs = pttlMs + Math.floor(Math.random() * 20)
    const waitMs = Math.min(
      remainingMs,
      stack.bus.live ? untilMs : Math.min(untilMs, CACHE_DEFAULTS.busDownPollMs),
    )
    if (await stack.step('lock_wait', () => waiter.woken(waitMs))) {
      // The value most likely landed: one GET, and a new claim only if it did not.
      const landed = await readLanded(stack, id, o, epoch)
      if (landed !== undefined) return landed
    }
  }
}

/** Reads a value another process just filled; undefined when it is not (or no longer) there. */
async function readLanded<T>(
  stack: CacheStack<T>,
  id: string,
  o: ResolvedCallOptions,
  epoch: number,
): Promise<Loaded<T> | undefined> {
  const entry = await stack.readEntry(id)
  if (entry === UNAVAILABLE || entry === undefined) return undefined
  stack.count(entry.kind === 'negative' ? 'negative_hit' : 'l2_hit', id)
  stack.remember(id, entry, o, epoch)
  return entryValue(entry)
}

/** Stale-while-revalidate: one refresh per id per process, one cluster-wide (claim in 'refresh' mode). */
function refreshInBackground<T>(
  stack: CacheStack<T>,
  id: string,
  loader: Loader<T>,
  o: ResolvedCallOptions,
): void {
  if (stack.refreshes.has(id)) return
  stack.refreshes
    .run(id, async () => {
      const epoch = stack.epoch
      const token = randomUUID()
      const claim = await stack.step('lock_claim', () => stack.l2.claim(id, token, o.lockTtlMs, 'refresh'))
      if (claim === UNAVAILABLE || claim.kind !== 'acquired') return
      // A failed refresh keeps serving stale; its lock stays as a back-off so no instance retries at once.
      await loadAndFill(stack, id, loader, { version: claim.version, token }, o, epoch, o.refreshBackoffMs)
    })
    .catch((error: unknown) =>
      stack.events.emit('background_error', { key: userKeyOf(id), error, task: 'refresh' }),
    )
}
