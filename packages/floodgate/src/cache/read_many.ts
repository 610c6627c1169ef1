import { passGate } from './bloom_step.js'
import { fillLoaded } from './fill.js'
import { UNAVAILABLE } from './l2/l2_store.js'
import { userKeyOf } from './namespace/scoped_key.js'
import { isNotFound, NOT_FOUND, type NotFound } from './not_found.js'
import type { ResolvedCallOptions } from './options.js'
import { type CacheStack, entryValue, type Loaded, unwrap } from './stack.js'

/**
 * Loads many values in one call. Returns a `Map` (missing keys mean not
 * found) or an array aligned with the `keys` it was given ({@link NOT_FOUND} allowed).
 */
export type BatchLoader<T> = (
  keys: string[],
) => Promise<Map<string, T | NotFound> | (T | NotFound)[]> | Map<string, T | NotFound> | (T | NotFound)[]

/**
 * `getManyOrLoad`, in the order of `readOne` (`read_one.ts`) with one batched step per tier:
 * L1 per id → in-process Bloom gate → one MGET (one `floodgate.cache.l2_read` span) → remote
 * Bloom gate for what L2 could not serve → one `batchLoader` call for the rest → fills in
 * parallel (pipelined on the connection), each version-checked like a single fill.
 * Stale entries (past logical expiry) count as misses and are reloaded in the batch.
 * Batches take no per-key lock: one loader call per process per batch.
 * @returns a Map from each distinct caller's key to its value, `undefined` for not found.
 * @throws whatever `batchLoader` throws.
 */
export async function readMany<T>(
  stack: CacheStack<T>,
  ids: readonly string[],
  batchLoader: BatchLoader<T>,
  o: ResolvedCallOptions,
): Promise<Map<string, T | undefined>> {
  const out = new Map<string, T | undefined>()
  const put = (id: string, value: Loaded<T>) => out.set(userKeyOf(id), unwrap(value))
  const notFound = (id: string) => put(id, NOT_FOUND)
  const now = Date.now()
  const misses: string[] = []
  for (const id of new Set(ids)) {
    const local = stack.l1?.get(id, now)
    if (local === undefined) misses.push(id)
    else {
      stack.count(isNotFound(local.value) ? 'negative_hit' : 'l1_hit', id)
      put(id, local.value)
    }
  }
  const toRead = await passGate(stack, o, misses, 'before_l2', notFound)
  if (toRead.length === 0) return out
  const epoch = stack.epoch
  const raws = await stack.step('l2_read', () => stack.l2.readMany(toRead))
  const unserved: string[] = []
  for (const [i, id] of toRead.entries()) {
    const entry = raws === UNAVAILABLE ? undefined : await stack.decode(id, raws[i] ?? null)
    if (entry === undefined || entry.expiresAtMs <= now) {
      unserved.push(id)
      continue
    }
    stack.count(entry.kind === 'negative' ? 'negative_hit' : 'l2_hit', id)
    stack.remember(id, entry, o, epoch)
    put(id, entryValue(entry))
  }
  const toLoad = await passGate(stack, o, unserved, 'after_l2', notFound)
  if (toLoad.length === 0) return out
  const versions =
    raws === UNAVAILABLE ? UNAVAILABLE : await stack.step('l2_versions', () => stack.l2.versions(toLoad))
  // a refused permit (o.permit): nothing is loaded, the call rejects with its reason
  if (o.permit !== undefined) await o.permit
  const loaded = await stack.timedLoad(undefined, async () => batchLoader(toLoad.map(userKeyOf)))
  const fills: Promise<void>[] = []
  for (const [i, id] of toLoad.entries()) {
    const value = pick(loaded, userKeyOf(id), i)
    put(id, value)
    const envelope = stack.envelope(value, o, versions === UNAVAILABLE ? '0' : (versions[i] ?? '0'))
    if (versions === UNAVAILABLE) stack.rememberLoaded(id, value, envelope, o, epoch)
    else
      fills.push(fillLoaded(stack, id, value, envelope, { version: versions[i] ?? '0', token: '' }, o, epoch))
  }
  await Promise.all(fills)
  return out
}

/** The batch loader's answer for `key` (position `i`); absent means not found. */
function pick<T>(loaded: Map<string, Loaded<T>> | Loaded<T>[], key: string, i: number): Loaded<T> {
  if (loaded instanceof Map) return loaded.has(key) ? (loaded.get(key) as Loaded<T>) : NOT_FOUND
  return i < loaded.length ? (loaded[i] as Loaded<T>) : NOT_FOUND
}
