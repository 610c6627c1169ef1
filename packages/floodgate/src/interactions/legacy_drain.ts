import { setTimeout as sleep } from 'node:timers/promises'
import { ScriptContractError } from '../errors/index.js'
import { type Logger, logError } from '../observability/index.js'
import { fromMember } from '../rankings/member.js'
import { LuaScript } from '../redis/lua_script.js'
import { isCluster, type RedisClient } from '../redis/types.js'
import type { SqlDatabase } from '../sql/executor.js'
import type { StreamGroupConsumer } from '../stream/consumer.js'
import { createFlushConsumer, type InteractionFlushOptions } from './flush.js'
import { InteractionKeys, type RankMetric } from './keys.js'
import { LegacyInteractionKeys } from './legacy_layout.js'

/** Delete a drained legacy stream in one step (`lua/drop-drained-stream-1.lua`). */
export const dropDrainedStreamScript = new LuaScript(
  new URL('./lua/drop-drained-stream-1.lua', import.meta.url),
)

/** Defaults of {@link startLegacyLayoutDrain} (ms, keys). */
export const LEGACY_DRAIN_DEFAULTS = {
  /** How often a draining legacy stream is checked (ms). */
  checkIntervalMs: 1000,
  /** How often legacy streams are looked for once there are none (ms): 16 EXISTS each time. */
  idleCheckIntervalMs: 10_000,
  /** Keys per SCAN page and per UNLINK of the legacy keys' cleanup. */
  cleanupBatch: 500,
  /** Longest wait of `CountsRecovery.restoreItem` for the legacy streams to drain (ms), polled every 50 ms. */
  restoreWaitMs: 30_000,
} as const

/** What {@link startLegacyLayoutDrain} reports to its observer. */
export type LegacyDrainEvent =
  | { type: 'draining'; streams: string[] }
  | { type: 'stream-dropped'; stream: string }
  | { type: 'cleaned'; keys: number; trendingBuckets: number }
  | { type: 'error'; error: unknown }

/** A running drain; `stop()` ends it (and its consumer) and resolves when it has. */
export interface LegacyLayoutDrain {
  stop(): Promise<void>
}

/**
 * Drains the event streams of the legacy interaction layout ({@link LegacyInteractionKeys}) into
 * PostgreSQL with the same group and applier as the flush, deletes each stream once every entry
 * in it was applied and acknowledged (`drop-drained-stream-1.lua`), then carries the per-minute
 * trending buckets over to the new partitions and deletes the legacy item state and ranking keys
 * (SCAN per master, UNLINK ≤ `cleanupBatch` keys a command; the legacy dead-letter streams are
 * kept: they hold entries for an operator). It keeps looking every `checkIntervalMs` for as long as it runs,
 * so entries an instance of the previous version appends during a rolling deploy are applied too.
 * Per-key watermarks make applying one item's events from two streams order-safe.
 *
 * `CountsRecovery` does not rebuild layout 2 from PostgreSQL while a legacy stream exists, so the
 * rebuild sees every legacy event. Run it beside the flush consumer (the service runs it in every
 * instance that runs the flush). Never throws; errors go to `onDrainEvent` and the log, and it retries.
 */
export function startLegacyLayoutDrain(
  redis: RedisClient,
  db: SqlDatabase,
  options: InteractionFlushOptions & {
    checkIntervalMs?: number
    /** Observer of the drain's steps (the consumer's own events go to `onEvent`, as the flush's). */
    onDrainEvent?: (event: LegacyDrainEvent) => void
  },
): LegacyLayoutDrain {
  const layout2 = new InteractionKeys(options.prefix, options.partitions)
  const legacy = new LegacyInteractionKeys(options.prefix, layout2.partitions)
  const checkIntervalMs = options.checkIntervalMs ?? LEGACY_DRAIN_DEFAULTS.checkIntervalMs
  const abort = new AbortController()
  let consumer: StreamGroupConsumer | undefined
  let consumed: string[] = []
  let cleaned = false
  const emit = (event: LegacyDrainEvent) => {
    log(options.logger, event, redis.status !== 'ready')
    try {
      options.onDrainEvent?.(event)
    } catch {
      // an observer's failure must not stop the drain
    }
  }
  const stopConsumer = async () => {
    const c = consumer
    consumer = undefined
    consumed = []
    await c?.stop()
  }

  const round = async () => {
    const partitions = await existingPartitions(redis, legacy)
    const present = partitions.map((p) => legacy.stream(p))
    if (present.length === 0) {
      await stopConsumer()
      if (!cleaned) {
        const buckets = await carryTrending(redis, legacy, layout2, abort.signal)
        const keys = await deleteLegacyKeys(redis, legacy, abort.signal)
        cleaned = true
        if (keys + buckets > 0) emit({ type: 'cleaned', keys, trendingBuckets: buckets })
      }
      return
    }
    cleaned = false
    if (present.join() !== consumed.join()) {
      await stopConsumer()
      emit({ type: 'draining', streams: present })
      // no registry: the flush consumer beside it owns the metric names
      consumer = createFlushConsumer(
        redis,
        db,
        { ...options, registry: undefined },
        {
          sources: partitions.map((p) => ({ stream: legacy.stream(p), deadLetter: legacy.dead(p) })),
          membersKey: undefined,
        },
      )
      consumed = present
      consumer.start()
    }
    for (const stream of present) {
      const [code] = dropReply(await dropDrainedStreamScript.run(redis, [stream], []))
      if (code === 1) emit({ type: 'stream-dropped', stream })
    }
  }

  const loop = (async () => {
    while (!abort.signal.aborted) {
      await round().catch((error: unknown) => emit({ type: 'error', error }))
      const pauseMs = consumer
        ? checkIntervalMs
        : Math.max(checkIntervalMs, LEGACY_DRAIN_DEFAULTS.idleCheckIntervalMs)
      await sleep(pauseMs, undefined, { signal: abort.signal }).catch(() => undefined)
    }
    await stopConsumer()
  })()

  return {
    stop: async () => {
      abort.abort()
      await loop
    },
  }
}

/** The legacy partitions whose stream exists now (one EXISTS each: their slots differ). */
export async function existingPartitions(
  redis: RedisClient,
  legacy: LegacyInteractionKeys,
): Promise<number[]> {
  const all = legacy.allPartitions()
  const exists = await Promise.all(all.map((p) => redis.exists(legacy.stream(p))))
  return all.filter((_, i) => exists[i] === 1)
}

/**
 * Calls `page` with each SCAN page of keys matching `pattern` on every master (without the
 * client's keyPrefix, which SCAN neither adds to MATCH nor strips from what it returns).
 */
async function scanKeys(
  redis: RedisClient,
  pattern: string,
  signal: AbortSignal,
  page: (keys: string[]) => Promise<void>,
): Promise<void> {
  const nodes = isCluster(redis) ? redis.nodes('master') : [redis]
  const keyPrefix = redis.options.keyPrefix ?? ''
  for (const node of nodes) {
    let cursor = '0'
    do {
      if (signal.aborted) return
      const [next, found] = await node.scan(
        cursor,
        'MATCH',
        keyPrefix + pattern,
        'COUNT',
        LEGACY_DRAIN_DEFAULTS.cleanupBatch,
      )
      cursor = next
      if (found.length > 0) await page(found.map((k) => k.slice(keyPrefix.length)))
    } while (cursor !== '0')
  }
}

/**
 * Carries the legacy per-minute trending buckets over to layout 2's partitions (ZINCRBY of each
 * entry into the bucket of its item's new partition, with the old bucket's remaining PTTL), so
 * trending does not restart empty. Each bucket is first RENAMEd aside (same slot): of two
 * instances cleaning up at once, one carries it. Returns the buckets carried.
 */
async function carryTrending(
  redis: RedisClient,
  legacy: LegacyInteractionKeys,
  keys: InteractionKeys,
  signal: AbortSignal,
): Promise<number> {
  let carried = 0
  await scanLegacyKeys(redis, legacy, signal, async (found) => {
    for (const bucket of found.filter((k) => legacy.isMinuteBucket(k))) {
      const moving = legacy.moving(bucket)
      const renamed = await redis.renamenx(bucket, moving).catch(() => 0) // gone: another instance has it
      if (renamed !== 1) continue
      const [, metric, minute] = /:min:(likes|plays):(\d+)$/.exec(bucket) ?? []
      if (metric !== undefined && minute !== undefined) {
        const ttlMs = await redis.pttl(moving)
        const entries = await redis.zrange(moving, '0', '-1', 'WITHSCORES')
        for (let i = 0; i + 1 < entries.length; i += 2) {
          const member = entries[i] as string
          const target = keys.rankMinute(
            keys.partitionOf(fromMember(member)),
            metric as RankMetric,
            Number(minute),
          )
          await redis.zincrby(target, Number(entries[i + 1]), member)
          if (ttlMs > 0) await redis.pexpire(target, ttlMs)
        }
      }
      await redis.unlink(moving)
      carried++
    }
  })
  return carried
}

/**
 * UNLINKs every legacy item state and ranking key (the dead-letter streams are kept) and the
 * legacy marker; returns how many.
 */
async function deleteLegacyKeys(
  redis: RedisClient,
  legacy: LegacyInteractionKeys,
  signal: AbortSignal,
): Promise<number> {
  const keep = new Set(legacy.allPartitions().map((p) => legacy.dead(p)))
  let deleted = 0
  await scanLegacyKeys(redis, legacy, signal, async (found) => {
    // one UNLINK per legacy partition: its keys share its tag, so one slot
    const byPartition = new Map<number, string[]>()
    for (const key of found) {
      if (keep.has(key)) continue
      const p = legacy.legacyPartitionOf(key)!
      byPartition.set(p, [...(byPartition.get(p) ?? []), key])
    }
    for (const doomed of byPartition.values()) deleted += await redis.unlink(...doomed)
  })
  return deleted + (await redis.unlink(legacy.epoch()))
}

/** SCANs every master for the legacy keys (two patterns, see `scanPatterns`), legacy keys only. */
async function scanLegacyKeys(
  redis: RedisClient,
  legacy: LegacyInteractionKeys,
  signal: AbortSignal,
  page: (keys: string[]) => Promise<void>,
): Promise<void> {
  for (const pattern of legacy.scanPatterns()) {
    await scanKeys(redis, pattern, signal, async (found) => {
      const mine = found.filter((k) => legacy.legacyPartitionOf(k) !== undefined)
      if (mine.length > 0) await page(mine)
    })
  }
}

/** `{ code, pending, undelivered }` of `drop-drained-stream-1.lua`. */
function dropReply(reply: unknown): [number, number, number] {
  if (Array.isArray(reply) && reply.length === 3 && reply.every((v) => typeof v === 'number'))
    return reply as [number, number, number]
  throw new ScriptContractError(dropDrainedStreamScript.name, reply)
}

/** `redisDown`: the drain's client was not connected when the event came. */
function log(logger: Logger | undefined, event: LegacyDrainEvent, redisDown: boolean): void {
  if (logger === undefined) return
  const fields = { primitive: 'legacyLayoutDrain' }
  // Redis out of reach is normal life (the drain retries): warn; anything else is a bug
  if (event.type === 'error' && redisDown)
    logger.warn({ ...fields, err: event.error }, 'legacy layout drain: Redis unreachable; retrying')
  else if (event.type === 'error')
    logError(logger, { ...fields, err: event.error }, 'legacy layout drain failed; retrying')
  else if (event.type === 'draining')
    logger.warn(
      { ...fields, streams: event.streams.length },
      'interaction layout 1 streams found: applying their events before layout 2 is rebuilt',
    )
  else if (event.type === 'cleaned')
    logger.warn(
      { ...fields, keys: event.keys },
      'interaction layout 1 keys deleted: migration to layout 2 done',
    )
}
