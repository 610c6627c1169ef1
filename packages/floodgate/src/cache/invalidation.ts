import { fullJitterDelayMs } from '../backoff/index.js'
import type { L2Store } from './l2/l2_store.js'

/** Cap of the first retry's wait (ms) of an invalidation or a namespace clear; it doubles per retry. */
export const INVALIDATION_RETRY_BASE_MS = 100

/** What {@link invalidateKeys} needs from its cache. */
export interface InvalidationContext {
  instanceId: string
  /** This process's L1 (its `delete` also moves the L1 epoch). */
  l1: { delete(keys: readonly string[]): void } | undefined
  l2: L2Store
  versionTtlMs: number
  retries: number
  onGiveUp: (key: string, error: unknown) => void
}

/** Result of an invalidation. */
export interface InvalidationResult {
  /** Keys whose L2 step failed and is being retried in the background (TTL is the last resort). */
  retrying: string[]
  /** Whether the L1 invalidation reached the bus. */
  published: boolean
}

/**
 * Invalidates `keys`: drop from this process's L1 (moving its epoch), run
 * invalidate-2.lua per key (DEL the value, bump the version so in-flight loads
 * cannot write), then PUBLISH the keys on the bus for every instance's L1 —
 * published even when the L2 step failed. Failed L2 steps (and a failed publish)
 * are retried in the background with full-jitter backoff (under a cap of 100 ms doubling),
 * at most `retries` times.
 */
export async function invalidateKeys(
  ctx: InvalidationContext,
  keys: readonly string[],
): Promise<InvalidationResult> {
  const unique = [...new Set(keys)]
  if (unique.length === 0) return { retrying: [], published: true }
  ctx.l1?.delete(unique)
  const results = await Promise.all(unique.map((key) => ctx.l2.invalidate(key, ctx.versionTtlMs)))
  const retrying = unique.filter((_, i) => !results[i])
  const published = await publish(ctx, unique)
  if (retrying.length > 0 || !published) void retry(ctx, retrying, !published ? unique : [], 1)
  return { retrying, published }
}

function publish(ctx: InvalidationContext, keys: readonly string[]): Promise<boolean> {
  return ctx.l2.publishInvalidation(JSON.stringify({ from: ctx.instanceId, keys }))
}

async function retry(
  ctx: InvalidationContext,
  l2Keys: readonly string[],
  publishKeys: readonly string[],
  attempt: number,
): Promise<void> {
  if (attempt > ctx.retries) {
    for (const key of new Set([...l2Keys, ...publishKeys])) {
      ctx.onGiveUp(key, new Error(`invalidation of ${key} still failing after ${ctx.retries} retries`))
    }
    return
  }
  const waitMs = fullJitterDelayMs(attempt - 1, INVALIDATION_RETRY_BASE_MS, Number.POSITIVE_INFINITY)
  await new Promise((resolve) => setTimeout(resolve, waitMs).unref())
  const results = await Promise.all(l2Keys.map((key) => ctx.l2.invalidate(key, ctx.versionTtlMs)))
  const stillFailing = l2Keys.filter((_, i) => !results[i])
  // Whatever we deleted late must also leave the peers' L1, which may have refilled meanwhile.
  const toPublish = [...new Set([...publishKeys, ...l2Keys])]
  const published = toPublish.length === 0 || (await publish(ctx, toPublish))
  if (stillFailing.length > 0 || !published) {
    await retry(ctx, stillFailing, published ? [] : toPublish, attempt + 1)
  }
}
