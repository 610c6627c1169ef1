import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { InteractionKeys } from '../../../packages/floodgate/src/interactions/keys.js'
import { bucketWeights } from '../../../packages/floodgate/src/rankings/decay.js'
import { parseWithScores } from '../../../packages/floodgate/src/rankings/merge.js'
import type { ResolvedWindow } from '../../../packages/floodgate/src/rankings/options.js'
import { execAll } from '../../../packages/floodgate/src/rankings/pipeline_results.js'
import { SlotBatch } from '../../../packages/floodgate/src/rankings/slot_batch.js'
import type { RankingMetric } from '../../../packages/floodgate/src/rankings/types.js'
import type { RedisClient } from '../../../packages/floodgate/src/redis/index.js'

/** The per-partition cached window merge and its lock (the layout before the shared merged top). */
function rankWindow(keys: InteractionKeys, p: number, metric: RankingMetric, window: string): string {
  return keys.space.tagged('rank', keys.tagOf(p), `win:${metric}:${window}`)
}

function windowLockKey(keys: InteractionKeys, p: number, metric: RankingMetric, window: string): string {
  return `${rankWindow(keys, p, metric, window)}:lock`
}

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
  /** Cached results this process recomputed (it held the recompute lock). */
  recomputes: number
  /** Partitions served a previous result while another instance recomputed. */
  staleServed: number
  /** Partitions computed privately (no cached result and the wait ran out); nothing shared was written. */
  privateComputes: number
  /** Members left out of an answer because their stored score was not a finite number (a foreign write). */
  corruptScores: number
}

type Entries = { id: string; score: number }[]

interface Probe {
  won: boolean
  ready: boolean
  exists: boolean
  rows: Entries
}

/**
 * The previous read path, kept as the bench's baseline (main before the shared merged top):
 * the cached merge of a partition's minute buckets. The lock key
 * `…:win:<metric>:<window>:lock` doubles as the freshness marker: `SET NX PX
 * cacheTtlMs` elects one recomputer per (partition, metric, window) per
 * period; it writes the merged result (`ZUNIONSTORE … WEIGHTS`, trimmed to top K,
 * kept `staleTtlMs`) in one MULTI and flips the lock to `ready` (TTL kept).
 * Everyone else serves the current result, or the previous one while the
 * recompute runs; with no result at all they poll briefly (`waitMs`), then
 * compute into a private key and delete it.
 */
export class WindowCache {
  readonly stats: WindowCacheStats = { recomputes: 0, staleServed: 0, privateComputes: 0, corruptScores: 0 }
  /** Counts a member {@link parseWithScores} left out; also passed to the all-time read. */
  readonly countCorrupt = (): void => {
    this.stats.corruptScores++
  }

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: InteractionKeys,
    private readonly settings: WindowCacheSettings,
  ) {}

  /** Top `limit` entries of every partition for the window, in rank order per partition. */
  async tops(metric: RankingMetric, window: ResolvedWindow, limit: number): Promise<Entries[]> {
    const token = randomBytes(8).toString('hex')
    const result: Entries[] = new Array(this.keys.partitions)
    let pending = [...Array(this.keys.partitions).keys()]
    const deadline = Date.now() + this.settings.waitMs
    let nowMs = 0
    for (let round = 0; pending.length > 0; round++) {
      if (round > 0) {
        if (Date.now() >= deadline) break
        await sleep(15 + Math.random() * 20)
      }
      const probe = await this.probe(pending, metric, window, limit, token)
      nowMs = probe.nowMs
      const waiting: number[] = []
      const recompute: number[] = []
      pending.forEach((p, i) => {
        const s = probe.states[i]!
        if (s.won) recompute.push(p)
        else if (s.ready || s.exists) {
          if (!s.ready) this.stats.staleServed++
          result[p] = s.rows
        } else waiting.push(p)
      })
      const computed = await Promise.all(
        recompute.map((p) => this.recompute(p, metric, window, limit, nowMs)),
      )
      recompute.forEach((p, i) => {
        result[p] = computed[i]!
      })
      pending = waiting
    }
    const computed = await Promise.all(
      pending.map((p) => this.privateCompute(p, metric, window, limit, nowMs)),
    )
    pending.forEach((p, i) => {
      result[p] = computed[i]!
    })
    return result
  }

  private async probe(
    partitions: number[],
    metric: RankingMetric,
    window: ResolvedWindow,
    limit: number,
    token: string,
  ): Promise<{ nowMs: number; states: Probe[] }> {
    const batch = new SlotBatch(this.redis).add('', (pipe) => pipe.time())
    for (const p of partitions) {
      const lock = windowLockKey(this.keys, p, metric, window.name)
      const dest = rankWindow(this.keys, p, metric, window.name)
      batch
        .add(lock, (pipe) => pipe.set(lock, token, 'PX', window.cacheTtlMs ?? this.settings.cacheTtlMs, 'NX'))
        .add(lock, (pipe) => pipe.get(lock))
        .add(dest, (pipe) => pipe.exists(dest))
        .add(dest, (pipe) => pipe.zrevrange(dest, 0, limit - 1, 'WITHSCORES'))
    }
    const replies = await batch.exec('window ranking probe')
    const [seconds, micros] = replies[0] as [string, string]
    const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
    const states = partitions.map((_, i) => {
      const base = 1 + i * 4
      return {
        won: replies[base] === 'OK',
        ready: replies[base + 1] === READY,
        exists: replies[base + 2] === 1,
        rows: parseWithScores(replies[base + 3], this.countCorrupt),
      }
    })
    return { nowMs, states }
  }

  private unionArgs(
    p: number,
    metric: RankingMetric,
    window: ResolvedWindow,
    nowMs: number,
  ): (string | number)[] {
    const minute = Math.floor(nowMs / MINUTE_MS)
    const weights = bucketWeights(window.windowMinutes, window.halfLifeMs / MINUTE_MS)
    const bucketKeys = weights.map((_, age) => this.keys.rankMinute(p, metric, minute - age))
    return [bucketKeys.length, ...bucketKeys, 'WEIGHTS', ...weights, 'AGGREGATE', 'SUM']
  }

  private async recompute(
    p: number,
    metric: RankingMetric,
    window: ResolvedWindow,
    limit: number,
    nowMs: number,
  ): Promise<Entries> {
    const dest = rankWindow(this.keys, p, metric, window.name)
    const lock = windowLockKey(this.keys, p, metric, window.name)
    const replies = await execAll(
      this.redis
        .multi()
        .call('ZUNIONSTORE', dest, ...this.unionArgs(p, metric, window, nowMs))
        .zremrangebyrank(dest, 0, -(this.settings.topK + 1))
        .pexpire(
          dest,
          Math.max(this.settings.staleTtlMs, 2 * (window.cacheTtlMs ?? this.settings.cacheTtlMs)),
        )
        .set(lock, READY, 'KEEPTTL', 'XX')
        .zrevrange(dest, 0, limit - 1, 'WITHSCORES'),
      'window ranking recompute',
    )
    this.stats.recomputes++
    return parseWithScores(replies[4], this.countCorrupt)
  }

  private async privateCompute(
    p: number,
    metric: RankingMetric,
    window: ResolvedWindow,
    limit: number,
    nowMs: number,
  ): Promise<Entries> {
    const tmp = `${rankWindow(this.keys, p, metric, window.name)}:tmp:${randomBytes(6).toString('hex')}`
    const replies = await execAll(
      this.redis
        .multi()
        .call('ZUNIONSTORE', tmp, ...this.unionArgs(p, metric, window, nowMs))
        .zrevrange(tmp, 0, limit - 1, 'WITHSCORES')
        .del(tmp),
      'window ranking private compute',
    )
    this.stats.privateComputes++
    return parseWithScores(replies[1], this.countCorrupt)
  }
}
