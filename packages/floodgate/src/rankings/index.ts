export { BucketRankings, createRankings, type RankingsOptions } from './bucket_rankings.js'
export { bucketWeights, decayRatePerMs, logAddExp } from './decay.js'
export { DecayedRankings, type DecayedRankingsOptions } from './decayed_rankings.js'
export { assertFiniteScore, parseScore } from './finite.js'
export { compareRanked, fromMember, MEMBER_WIDTH, toMember } from './member.js'
export { partitionOf } from './partition.js'
export {
  DEFAULT_WINDOWS,
  RANKING_METRICS,
  type RankedItem,
  type RankingMetric,
  type Rankings,
  type TopQuery,
  type WindowSpec,
} from './types.js'
export type { WindowCacheStats } from './window_cache.js'
