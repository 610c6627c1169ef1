import type { Envelope } from './envelope.js'
import type { L1Cache } from './l1/l1_cache.js'
import { type L2Store, UNAVAILABLE } from './l2/l2_store.js'
import { isNotFound, NOT_FOUND, type NotFound } from './not_found.js'
import type { BloomGate, ResolvedCallOptions } from './options.js'

/**
 * Loads many values in one call. Returns a `Map` (missing keys mean not
 * found) or an array aligned with the `keys` it was given ({@link NOT_FOUND} allowed).
 */
export type BatchLoader<T> = (
  keys: string[],
) => Promise<Map<string, T | NotFound> | (T | NotFound)[]> | Map<string, T | NotFound> | (T | NotFound)[]

/** What {@link getMany} needs from its cache. */
export interface GetManyContext<T> {
  l1: L1Cache<T> | undefined
  l2: L2Store
  decode(key: string, raw: Buffer): Promise<Envelope<T> | undefined>
  envelope(
    value: T | NotFound,
    o: ResolvedCallOptions,
    version: string,
  ): { bytes: Buffer; expiresAtMs: number; physicalTtlMs: number; mode: 'set' | 'nx' }
  remember(key: string, entry: Envelope<T>, o: ResolvedCallOptions, epoch: number): void
  rememberLoaded(
    key: string,
    value: T | NotFound,
    envelope: { bytes: Buffer; expiresAtMs: number },
    o: ResolvedCallOptions,
    epoch: number,
  ): void
  bloomAllows(bloom: BloomGate, keys: readonly string[]): Promise<boolean[]>
  count(outcome: 'l1_hit' | 'l2_hit' | 'negative_hit' | 'bloom_reject' | 'load', key?: string): void
  timeLoad<R>(fn: () => Promise<R>): Promise<R>
}

/**
 * L1 for each key, then the Bloom gate (in-process or remote: one batched question either way, so
 * both come before L2 here), then one MGET for the rest, then one
 * `batchLoader` call for what is still missing; the fills run in parallel
 * (pipelined on the connection), each version-checked like a single fill.
 * Stale entries (past logical expiry) count as misses and are reloaded in the batch.
 * Batches take no per-key mutex: a batch is one loader call per process per batch.
 */
export async function getMany<T>(
  ctx: GetManyContext<T>,
  keys: readonly string[],
  batchLoader: BatchLoader<T>,
  o: ResolvedCallOptions,
): Promise<Map<string, T | undefined>> {
  const out = new Map<string, T | undefined>()
  const now = Date.now()
  let misses: string[] = []
  for (const key of new Set(keys)) {
    const local = ctx.l1?.get(key, now)
    if (local === undefined) misses.push(key)
    else {
      ctx.count(isNotFound(local.value) ? 'negative_hit' : 'l1_hit', key)
      out.set(key, isNotFound(local.value) ? undefined : local.value)
    }
  }
  if (misses.length > 0 && o.bloom) {
    const maybe = await ctx.bloomAllows(o.bloom, misses)
    misses = misses.filter((key, i) => {
      if (maybe[i] !== false) return true
      ctx.count('bloom_reject', key)
      out.set(key, undefined)
      return false
    })
  }
  if (misses.length === 0) return out
  const epoch = ctx.l1?.epoch ?? 0
  const raws = await ctx.l2.readMany(misses)
  const toLoad: string[] = []
  for (const [i, key] of misses.entries()) {
    const raw = raws === UNAVAILABLE ? null : (raws[i] ?? null)
    const entry = raw === null ? undefined : await ctx.decode(key, raw)
    if (entry === undefined || entry.expiresAtMs <= now) {
      toLoad.push(key)
      continue
    }
    ctx.count(entry.kind === 'negative' ? 'negative_hit' : 'l2_hit', key)
    ctx.remember(key, entry, o, epoch)
    out.set(key, entry.kind === 'negative' ? undefined : entry.value)
  }
  if (toLoad.length === 0) return out
  const versions = raws === UNAVAILABLE ? UNAVAILABLE : await ctx.l2.versions(toLoad)
  const loaded = await ctx.timeLoad(async () => batchLoader([...toLoad]))
  const writes: Promise<unknown>[] = []
  for (const [i, key] of toLoad.entries()) {
    const value: T | NotFound =
      loaded instanceof Map
        ? loaded.has(key)
          ? (loaded.get(key) as T | NotFound)
          : NOT_FOUND
        : i < loaded.length
          ? (loaded[i] as T | NotFound)
          : NOT_FOUND
    out.set(key, isNotFound(value) ? undefined : value)
    const version = versions === UNAVAILABLE ? undefined : versions[i]
    const envelope = ctx.envelope(value, o, version ?? '0')
    if (version === undefined) {
      ctx.rememberLoaded(key, value, envelope, o, epoch)
      continue
    }
    writes.push(
      ctx.l2.fill(key, envelope.bytes, envelope.physicalTtlMs, version, '', envelope.mode).then((result) => {
        if (result === 'written') ctx.rememberLoaded(key, value, envelope, o, epoch)
      }),
    )
  }
  await Promise.all(writes)
  return out
}
