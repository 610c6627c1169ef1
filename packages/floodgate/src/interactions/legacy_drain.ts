import { setTimeout as sleep } from 'node:timers/promises'
import { ScriptContractError } from '../errors/index.js'
import { type Logger, logError } from '../observability/index.js'
import { LuaScript } from '../redis/lua_script.js'
import { isCluster, type RedisClient } from '../redis/types.js'
import type { SqlDatabase } from '../sql/executor.js'
import type { StreamGroupConsumer } from '../stream/consumer.js'
import { createFlushConsumer, type InteractionFlushOptions } from './flush.js'
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
} as const

/** What {@link startLegacyLayoutDrain} reports to its observer. */
export type LegacyDrainEvent =
  | { type: 'draining'; streams: string[] }
  | { type: 'stream-dropped'; stream: string }
  | { type: 'cleaned'; keys: number }
  | { type: 'error'; error: unknown }

/** A running drain; `stop()` ends it (and its consumer) and resolves when it has. */
export interface LegacyLayoutDrain {
  stop(): Promise<void>
}

/**
 * Drains the event streams of the legacy interaction layout ({@link LegacyInteractionKeys}) into
 * PostgreSQL with the same group and applier as the flush, deletes each stream once every entry
 * in it was applied and acknowledged (`drop-drained-stream-1.lua`), then deletes the legacy item
 * state and ranking keys (SCAN per master, UNLINK ≤ `cleanupBatch` keys a command; the legacy
 * dead-letter streams are kept). It keeps looking every `checkIntervalMs` for as long as it runs,
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
  const legacy = new LegacyInteractionKeys(options.prefix)
  const checkIntervalMs = options.checkIntervalMs ?? LEGACY_DRAIN_DEFAULTS.checkIntervalMs
  const abort = new AbortController()
  let consumer: StreamGroupConsumer | undefined
  let consumed: string[] = []
  let cleaned = false
  const emit = (event: LegacyDrainEvent) => {
    log(options.logger, event)
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
        const keys = await deleteLegacyKeys(redis, legacy, abort.signal)
        cleaned = true
        if (keys > 0) emit({ type: 'cleaned', keys })
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

/** SCANs every master for the legacy item state and ranking keys and UNLINKs them; returns how many. */
async function deleteLegacyKeys(
  redis: RedisClient,
  legacy: LegacyInteractionKeys,
  signal: AbortSignal,
): Promise<number> {
  const nodes = isCluster(redis) ? redis.nodes('master') : [redis]
  // SCAN neither adds the client's keyPrefix to MATCH nor strips it from the keys it returns
  const keyPrefix = redis.options.keyPrefix ?? ''
  const keep = new Set(legacy.allPartitions().map((p) => legacy.dead(p)))
  let deleted = 0
  const batch = LEGACY_DRAIN_DEFAULTS.cleanupBatch
  for (const p of legacy.allPartitions()) {
    for (const pattern of legacy.patterns(p)) {
      for (const node of nodes) {
        let cursor = '0'
        do {
          if (signal.aborted) return deleted
          const [next, found] = await node.scan(cursor, 'MATCH', keyPrefix + pattern, 'COUNT', batch)
          cursor = next
          const doomed = found.map((k) => k.slice(keyPrefix.length)).filter((k) => !keep.has(k))
          // every key of one pattern carries the partition's tag: one slot, one UNLINK
          if (doomed.length > 0) deleted += await redis.unlink(...doomed)
        } while (cursor !== '0')
      }
    }
  }
  const epoch = await redis.unlink(legacy.epoch())
  return deleted + epoch
}

/** `{ code, pending, undelivered }` of `drop-drained-stream-1.lua`. */
function dropReply(reply: unknown): [number, number, number] {
  if (Array.isArray(reply) && reply.length === 3 && reply.every((v) => typeof v === 'number'))
    return reply as [number, number, number]
  throw new ScriptContractError(dropDrainedStreamScript.name, reply)
}

function log(logger: Logger | undefined, event: LegacyDrainEvent): void {
  if (logger === undefined) return
  const fields = { primitive: 'legacyLayoutDrain' }
  if (event.type === 'error')
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
