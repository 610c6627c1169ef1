/**
 * The flush consumer's handler as it was before the COPY + merge applier (commit 1fcd423):
 * fence, XCLAIM … JUSTID of every entry (the pending check), then the previous applier. Kept
 * for bench/flush's side-by-side "previous" rows only.
 */
import {
  type FailedEntry,
  type InteractionEvent,
  InteractionKeys,
  type InteractionTablesOptions,
  isPoisonError,
  netEvents,
  parseInteractionEvent,
  type RedisClient,
  type SqlDatabase,
  type StreamConsumerOptions,
  type StreamEntry,
  StreamGroupConsumer,
} from 'floodgate'
import { holdFlushFence } from '../../../packages/floodgate/src/interactions/flush_fence.js'
import { PreviousInteractionApplier } from './applier.js'

export function createPreviousFlush(
  redis: RedisClient,
  db: SqlDatabase,
  options: Omit<StreamConsumerOptions, 'sources' | 'group' | 'handler' | 'isPoison'> & {
    prefix: string
    partitions: number
    tables: InteractionTablesOptions
  },
): StreamGroupConsumer {
  const { prefix, partitions, tables, ...consumerOptions } = options
  const keys = new InteractionKeys(prefix, partitions)
  const applier = new PreviousInteractionApplier(tables)
  const group = 'flush'
  const consumer: StreamGroupConsumer = new StreamGroupConsumer(redis, {
    ...consumerOptions,
    sources: keys.allPartitions().map((p) => ({ stream: keys.stream(p), deadLetter: keys.dead(p) })),
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
      await db.transaction(async (tx) => {
        await holdFlushFence(tx, keys)
        const pending = await claimStillPending(
          redis,
          group,
          consumer.name,
          parsed.map((p) => p.entry),
        )
        const live = parsed.filter((p) => pending.has(`${p.entry.stream} ${p.entry.id}`))
        const { memberships, plays } = netEvents(live.map((p) => p.event))
        await applier.applyNetted(tx, memberships, plays)
      })
      return { failed }
    },
  })
  return consumer
}

/** The previous pending check: `XCLAIM … 0 <ids> JUSTID` per stream. */
async function claimStillPending(
  redis: RedisClient,
  group: string,
  consumer: string,
  entries: readonly StreamEntry[],
): Promise<Set<string>> {
  const byStream = new Map<string, string[]>()
  for (const e of entries) {
    const ids = byStream.get(e.stream)
    if (ids) ids.push(e.id)
    else byStream.set(e.stream, [e.id])
  }
  const pending = new Set<string>()
  await Promise.all(
    [...byStream].map(async ([stream, ids]) => {
      const claimed = await redis
        .call('XCLAIM', stream, group, consumer, 0, ...ids, 'JUSTID')
        .catch((error: unknown) => {
          if (error instanceof Error && error.message.startsWith('NOGROUP')) return []
          throw error
        })
      if (Array.isArray(claimed)) for (const id of claimed) pending.add(`${stream} ${String(id)}`)
    }),
  )
  return pending
}
