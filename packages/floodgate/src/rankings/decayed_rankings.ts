import type { InteractionKeys } from '../interactions/keys.js'
import type { RedisClient } from '../redis/index.js'
import { integerIn } from '../validation/index.js'
import { decayRatePerMs } from './decay.js'
import { toMember } from './member.js'
import { mergeTops } from './merge.js'
import { assertQuery, type ResolvedWindow, resolveRankingsLayout, windowOf } from './options.js'
import { decayedKey } from './ranking_keys.js'
import { decayAddReply, decayAddScript } from './scripts.js'
import { SlotBatch } from './slot_batch.js'
import { readTopsByThreshold } from './threshold_read.js'
import { timeReplyMs } from './time_reply.js'
import type { RankedItem, RankingMetric, Rankings, TopQuery, WindowSpec } from './types.js'

/** Options of {@link DecayedRankings}. */
export interface DecayedRankingsOptions {
  redis: RedisClient
  /** Key prefix (e.g. `va`). */
  prefix: string
  /** @default 300 (`INTERACTION_DEFAULTS.partitions`) */
  partitions?: number
  /** Entries kept per partition and window. @default 1000 */
  topK?: number
  /** Windows by name; only `halfLifeMs` matters here (the window is not a hard cut-off). @default as {@link createRankings} */
  windows?: Record<string, WindowSpec>
  /**
   * Origin (ms since the Unix epoch) event times are measured from; keeps λ·t small. Changing it invalidates stored scores.
   * @default 1767225600000 (2026-01-01T00:00:00Z)
   */
  originMs?: number
}

/**
 * The alternative trending design: one exponentially decayed score per item
 * kept in log space (`s ← logaddexp(s, λ·t)`, λ = ln 2 / half-life), one ZADD per
 * event and never re-scored; ordering by `s` is ordering by the decayed count
 * `exp(s − λ·now)`. Limits: it adds only (an unlike cannot remove the like's
 * original weight, which depends on when that like happened), and old events
 * fade but never leave (no hard window edge). Kept for the benchmark; the
 * service uses {@link BucketRankings}.
 */
export class DecayedRankings implements Rankings {
  readonly keys: InteractionKeys
  readonly topK: number
  /** Members left out of `top()` answers in this process because their stored score was not finite. */
  readonly stats = { corruptScores: 0 }
  private readonly windows: Map<string, ResolvedWindow>
  private readonly originMs: number

  /** @throws {InvalidArgumentError} for invalid options (a window's `halfLifeMs` below 1 ms among them). */
  constructor(private readonly options: DecayedRankingsOptions) {
    const layout = resolveRankingsLayout(options)
    this.keys = layout.keys
    this.topK = layout.topK
    this.windows = layout.windows
    this.originMs = integerIn('originMs', options.originMs ?? 1_767_225_600_000, 0, 8.64e15)
  }

  /**
   * Records one event (a like or a play) for an item in every window: one Lua step (ZSCORE + ZADD + trim) per window.
   * @returns the new log-space score per window.
   * @throws {InvalidArgumentError} for a bad id. @throws {StoreUnavailableError} when Redis fails.
   */
  async record(itemId: string, metric: RankingMetric): Promise<Record<string, number>> {
    const member = toMember(itemId)
    const p = this.keys.partitionOf(itemId)
    const out: Record<string, number> = {}
    await Promise.all(
      [...this.windows.values()].map(async (w) => {
        const key = decayedKey(this.keys, p, metric, w.name)
        const lambda = decayRatePerMs(w.halfLifeMs)
        const reply = await decayAddScript.run(
          this.options.redis,
          [key],
          [member, lambda, this.originMs, this.topK],
        )
        out[w.name] = decayAddReply(reply)
      }),
    )
    return out
  }

  /** Top items of a window; `score` is the decayed event count now (`exp(s − λ·now)`). */
  async top(query: TopQuery): Promise<RankedItem[]> {
    const metric = assertQuery(query, this.topK)
    const window = windowOf(this.windows, query.window)
    const time = new SlotBatch(this.options.redis).add('', (pipe) => pipe.time())
    const countCorrupt = () => {
      this.stats.corruptScores++
    }
    const { parts, head } = await readTopsByThreshold(
      this.options.redis,
      (p) => decayedKey(this.keys, p, metric, window.name),
      this.keys.partitions,
      query.limit,
      'decayed ranking read',
      { onCorrupt: countCorrupt, first: time },
    )
    const lambdaT = decayRatePerMs(window.halfLifeMs) * (timeReplyMs(head[0]) - this.originMs)
    return mergeTops(parts, query.limit, (s) => Math.exp(s - lambdaT))
  }
}
