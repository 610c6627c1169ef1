import type { RedisClient } from '../redis/types.js'
import type { SqlDatabase } from '../sql/executor.js'
import { StreamGroupConsumer } from '../stream/consumer.js'
import type { StreamConsumerOptions } from '../stream/options.js'
import type { FailedEntry, StreamEntry } from '../stream/types.js'
import { InteractionApplier, netEvents } from './apply.js'
import { INTERACTION_DEFAULTS } from './defaults.js'
import { isPoisonError } from './errors.js'
import { type InteractionEvent, parseInteractionEvent } from './events.js'
import { holdFlushFence, notPending } from './flush_fence.js'
import { InteractionKeys } from './keys.js'
import type { InteractionTablesOptions } from './tables.js'

/** Options of {@link createInteractionFlush}: the consumer's options plus where the events live. */
export interface InteractionFlushOptions
  extends Omit<StreamConsumerOptions, 'sources' | 'group' | 'handler' | 'isPoison' | 'membersKey'> {
  /** Key prefix, as given to {@link Interactions}. Required. */
  prefix: string
  /** Partitions, as given to {@link Interactions}. @default 300 ({@link INTERACTION_DEFAULTS}) */
  partitions?: number
  /** Consumer group name. @default 'flush' */
  group?: string
  /** Entries applied per PostgreSQL transaction. @default 5000 ({@link INTERACTION_DEFAULTS}.flushBatchSize) */
  batchSize?: number
  /** Tables and columns, as given to {@link interactionLayout}. @default {@link defaultInteractionTables} */
  tables?: InteractionTablesOptions
  /** Prometheus name prefix. @default 'floodgate_interactions_flush_' */
  metricPrefix?: string
  /**
   * Share the partitions among the group's live consumers (heartbeats in
   * {@link InteractionKeys.flushMembers}; see `StreamConsumerOptions.membersKey`): a partition's
   * items are then applied by one consumer at a time, so instances do not queue on the same
   * item rows. `false`: every consumer reads every partition.
   * @default true
   */
  assignPartitions?: boolean
}

/**
 * The durable flush of interaction events to PostgreSQL: one consumer (run
 * one per service instance) of the `flush` group, reading its share of the
 * partition streams (all of them with `assignPartitions: false`), applying each
 * batch with {@link InteractionApplier} in one transaction, then XACK.
 * Inside that transaction, under the flush fence shared with the Redis-loss recovery, only the
 * entries still pending in the group are applied: entries Redis lost (or another consumer
 * acknowledged) are skipped and logged, so a batch read before a loss never lands after the
 * rebuild read its items.
 * Malformed entries and entries PostgreSQL rejects as data errors
 * (SQLSTATE 22/23) stay pending and go to the partition's dead-letter stream
 * after `maxDeliveries`; any other database error backs off and retries the
 * batch without acknowledging it. Call `start()`; `stop()` on shutdown.
 *
 * @throws {InvalidArgumentError} on invalid options.
 */
export function createInteractionFlush(
  redis: RedisClient,
  db: SqlDatabase,
  options: InteractionFlushOptions,
): StreamGroupConsumer {
  const { prefix, partitions, group = 'flush', assignPartitions = true } = options
  const keys = new InteractionKeys(prefix, partitions)
  return createFlushConsumer(redis, db, options, {
    membersKey: assignPartitions ? keys.flushMembers(group) : undefined,
    sources: keys.allPartitions().map((p) => ({ stream: keys.stream(p), deadLetter: keys.dead(p) })),
  })
}

/**
 * The flush's consumer over `streams` (the layout's partitions, or the legacy layout's streams
 * while they drain: see `startLegacyLayoutDrain`).
 */
export function createFlushConsumer(
  redis: RedisClient,
  db: SqlDatabase,
  options: InteractionFlushOptions,
  streams: Pick<StreamConsumerOptions, 'sources' | 'membersKey'>,
): StreamGroupConsumer {
  const { prefix, partitions, group = 'flush', tables, assignPartitions: _, ...consumerOptions } = options
  const keys = new InteractionKeys(prefix, partitions)
  const applier = new InteractionApplier(tables)
  const consumer: StreamGroupConsumer = new StreamGroupConsumer(redis, {
    metricPrefix: 'floodgate_interactions_flush_',
    ...consumerOptions,
    batchSize: consumerOptions.batchSize ?? INTERACTION_DEFAULTS.flushBatchSize,
    ...streams,
    group,
    isPoison: isPoisonError,
    handler: async (entries: readonly StreamEntry[]) => {
      const parsed: { entry: StreamEntry; event: InteractionEvent }[] = []
      const failed: FailedEntry[] = []
      for (const entry of entries) {
        try {
          parsed.push({ entry, event: parseInteractionEvent(entry) })
        } catch (error) {
          failed.push({ entry, error })
        }
      }
      if (parsed.length === 0) return { failed }
      const skipped = await db.transaction(async (tx) => {
        await holdFlushFence(tx, keys)
        const gone = await notPending(
          redis,
          group,
          parsed.map((p) => p.entry),
        )
        const live = gone.size === 0 ? parsed : parsed.filter((p) => !gone.has(p.entry))
        const { memberships, plays } = netEvents(live.map((p) => p.event))
        await applier.applyNetted(tx, memberships, plays)
        return parsed.length - live.length
      })
      if (skipped > 0)
        consumerOptions.logger?.warn(
          { primitive: 'streamConsumer', group, consumer: consumer.name, skipped },
          `stream consumer ${group}: ${skipped} entries no longer pending (lost with Redis's data, or acknowledged by another consumer); not applied`,
        )
      return { failed }
    },
  })
  return consumer
}
