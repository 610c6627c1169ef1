import type { FastifyBaseLogger } from 'fastify'
import {
  createInteractionFlush,
  type InteractionFlushOptions,
  type InteractionLayout,
  type LegacyLayoutDrain,
  type RedisClient,
  type StreamGroupConsumer,
  startLegacyLayoutDrain,
} from 'floodgate'
import type { Kysely } from 'kysely'
import type { Registry } from 'prom-client'
import type { Database } from '../db/types.js'
import { kyselySqlDatabase } from './sql_database.js'

/** Flush settings the service exposes. */
export interface FlushSettings {
  /** Entries per PostgreSQL transaction. @default floodgate's `INTERACTION_DEFAULTS.flushBatchSize` */
  batchSize?: number
  /** Idle time (ms) before a dead consumer's entries are claimed. @default floodgate's `STREAM_CONSUMER_DEFAULTS.claimIdleMs` */
  claimIdleMs?: number
  /** Poison deliveries before the dead-letter stream. @default floodgate's `STREAM_CONSUMER_DEFAULTS.maxDeliveries` */
  maxDeliveries?: number
  /** Blocking read (ms) when the streams are empty. @default floodgate's `STREAM_CONSUMER_DEFAULTS.blockMs` */
  blockMs?: number
}

/**
 * Starts this instance's consumer of the interaction streams (group `flush`), with its lag and
 * throughput metrics on `registry`; errors and dead letters go to the log. The instances share
 * the partitions (each reads its own; a stopped or silent instance's go to the others). Beside it,
 * the drain of the layout-1 streams (`startLegacyLayoutDrain`: a no-op but for one EXISTS per
 * legacy partition a second once they are gone). Stop both before the database closes.
 */
export function startInteractionFlush(input: {
  redis: RedisClient
  db: Kysely<Database>
  /** The key layout the write path uses (prefix, partitions, tables). */
  layout: InteractionLayout
  registry: Registry
  log: FastifyBaseLogger
  settings?: FlushSettings
}): { flush: StreamGroupConsumer; legacyDrain: LegacyLayoutDrain } {
  const { settings = {} } = input
  const flushOptions: InteractionFlushOptions = {
    ...input.layout,
    batchSize: settings.batchSize,
    claimIdleMs: settings.claimIdleMs,
    maxDeliveries: settings.maxDeliveries,
    blockMs: settings.blockMs,
    registry: input.registry,
    onEvent: (event) => {
      if (event.type === 'error')
        input.log.warn({ err: event.error, phase: event.phase }, 'interaction flush error')
      else if (event.type === 'dead-lettered')
        input.log.error(
          { err: event.error, id: event.id, stream: event.stream },
          'interaction event dead-lettered',
        )
      else if (event.type === 'claimed')
        input.log.info(event, 'claimed interaction events from an idle consumer')
      else if (event.type === 'assigned')
        input.log.info(
          { partitions: event.streams.length, members: event.members },
          'interaction flush partitions reassigned',
        )
    },
  }
  const flush = createInteractionFlush(input.redis, kyselySqlDatabase(input.db), flushOptions)
  flush.start()
  // upgrading from layout 1: apply and remove its streams (logs a warning while it does)
  const legacyDrain = startLegacyLayoutDrain(input.redis, kyselySqlDatabase(input.db), {
    ...flushOptions,
    logger: input.log,
  })
  return { flush, legacyDrain }
}
