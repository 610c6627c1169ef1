import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { InteractionKeys } from '../interactions/keys.js'
import type { RedisClient } from '../redis/index.js'
import { mergeTops, parseWithScores } from './merge.js'
import type { ResolvedWindow } from './options.js'
import { execAll } from './pipeline_results.js'
import { windowTopKeys } from './ranking_keys.js'
import { windowTopScript } from './scripts.js'
import { timeReplyMs } from './time_reply.js'
import type { RankedItem, RankingMetric } from './types.js'

/** Value the recompute lock holds once the cached result it guards is written. */
const READY = 'ready'
const MINUTE_MS = 60_000

/** Tunables of the cached window merge (all ms). */
export interface WindowCacheSettings {
  topK: number
  cacheTtlMs: number
  staleTtlMs: number
  waitMs: number
}

/** Counters of what the window cache did (per process). */
export interface WindowCacheStats {
  /** Merged results this process recomputed and shared (it held the recompute lock). */
  recomputes: number
  /** Reads served the previous merged result while it was recomputed (by this or another instance). */
  staleServed: number
  /** Recomputes run behind a stale answer that failed (Redis down or slow); the next period retries. */
  refreshFailures: number
  /** Reads computed privately (no shared result and the wait ran out); nothing shared was written. */
  privateComputes: number
  /** Members left out of an answer because their stored score was not a finite number (a foreign write). */
  corruptScores: number
}

/**
 * The merged top of a trending window, shared by every instance: one STRING (JSON
 * `[[itemId, score], …]`) per (metric, window, limit), so a read is ONE round trip of three
 * commands on one slot, whatever the number of partitions. Its lock key (`…:lock`, same hash
 * tag) doubles as the freshness marker: `SET NX PX cacheTtlMs` elects one recomputer per
 * period; it merges every partition's minute buckets (`window-top-1.lua`: one script call per
 * partition, a few bytes of arguments each), merges their tops client-side, and writes the result
 * (kept `staleTtlMs`) and flips the lock to `ready` (TTL kept) in one MULTI. Stale-while-revalidate:
 * while a previous result exists, every reader, the elected one too, answers with it at once and
 * the recompute runs behind; with no result at all the elected reader answers with its recompute,
 * and the others poll briefly (`waitMs`), then compute privately without writing.
 */
export class WindowCache {
  readonly stats: WindowCacheStats = {
    recomputes: 0,
    staleServed: 0,
    refreshFailures: 0,
    privateComputes: 0,
    corruptScores: 0,
  }
  /** Counts a member {@link parseWithScores} left out; also passed to the all-time read. */
  readonly countCorrupt = (): void => {
    this.stats.corruptScores++
  }

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: InteractionKeys,
    private readonly settings: WindowCacheSettings,
  ) {}

  /**
   * The top `limit` items of the window over all partitions, in rank order.
   * @throws {StoreUnavailableError} when Redis fails.
   */
  async top(metric: RankingMetric, window: ResolvedWindow, limit: number): Promise<RankedItem[]> {
    const token = randomBytes(8).toString('hex')
    const { value, lock } = windowTopKeys(this.keys, metric, window.name, limit)
    const freshMs = window.cacheTtlMs ?? this.settings.cacheTtlMs
    const deadline = Date.now() + this.settings.waitMs
    let nowMs = 0
    for (let round = 0; ; round++) {
      if (round > 0) {
        if (Date.now() >= deadline) break
        await sleep(15 + Math.random() * 20)
      }
      const [won, state, cached, time] = await execAll(
        this.redis.pipeline().set(lock, token, 'PX', freshMs, 'NX').get(lock).get(value).time(),
        'window ranking probe',
      )
      nowMs = timeReplyMs(time)
      const items = typeof cached === 'string' ? this.decode(cached) : undefined
      const at = { value, lock, freshMs }
      if (won === 'OK') {
        if (!items) return this.recompute(metric, window, limit, nowMs, at)
        // stale-while-revalidate: the elected reader answers at once too; a failed recompute
        // leaves the lock to expire after freshMs, and the next reader elected then retries
        this.recompute(metric, window, limit, nowMs, at).catch(() => {
          this.stats.refreshFailures++
        })
        this.stats.staleServed++
        return items
      }
      if (items) {
        if (state !== READY) this.stats.staleServed++
        return items
      }
    }
    this.stats.privateComputes++
    return this.merge(metric, window, limit, nowMs)
  }

  /** Every partition's top `limit` of the window at `nowMs`, merged. */
  private async merge(
    metric: RankingMetric,
    window: ResolvedWindow,
    limit: number,
    nowMs: number,
  ): Promise<RankedItem[]> {
    const args = [Math.floor(nowMs / MINUTE_MS), window.windowMinutes, window.halfLifeMs / MINUTE_MS, limit]
    const replies = await Promise.all(
      this.keys
        .allPartitions()
        .map((p) => windowTopScript.run(this.redis, [this.keys.rankMinutePrefix(p, metric)], args)),
    )
    return mergeTops(
      replies.map((reply) => parseWithScores(reply, this.countCorrupt)),
      limit,
    )
  }

  private async recompute(
    metric: RankingMetric,
    window: ResolvedWindow,
    limit: number,
    nowMs: number,
    at: { value: string; lock: string; freshMs: number },
  ): Promise<RankedItem[]> {
    const items = await this.merge(metric, window, limit, nowMs)
    await execAll(
      this.redis
        .multi()
        .set(
          at.value,
          JSON.stringify(items.map((e) => [e.itemId, e.score])),
          'PX',
          Math.max(this.settings.staleTtlMs, 2 * at.freshMs),
        )
        .set(at.lock, READY, 'KEEPTTL', 'XX'),
      'window ranking recompute',
    )
    this.stats.recomputes++
    return items
  }

  /** A stored result, or undefined when it is not one (a foreign write: recomputed, counted). */
  private decode(stored: string): RankedItem[] | undefined {
    try {
      const rows = JSON.parse(stored) as unknown
      if (Array.isArray(rows) && rows.every(isRow)) return rows.map(([itemId, score]) => ({ itemId, score }))
    } catch {
      // not JSON: fall through
    }
    this.countCorrupt()
    return undefined
  }
}

function isRow(row: unknown): row is [string, number] {
  return (
    Array.isArray(row) &&
    row.length === 2 &&
    typeof row[0] === 'string' &&
    typeof row[1] === 'number' &&
    Number.isFinite(row[1])
  )
}
