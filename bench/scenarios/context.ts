import { createHmac } from 'node:crypto'
import type pg from 'pg'
import type { ModeDeployment, ModeName } from './modes.js'

/** Durations and sizes of one bench run (`--quick` or full). */
export interface Params {
  quick: boolean
  videos: number
  users: number
  instances: number
  /** Cache TTL (ms) of floodgate's lower bound and of the older design's fixed TTL. */
  ttlMs: number
  /** Offered read load (req/s, all instances together). */
  readRate: number
  connections: number
  /** Hot key expiry: the hottest videos cached in one burst. */
  hotKeys: number
  /** Hot key expiry: ranks hotKeys+1 … hotTailWarm cached in a second burst (the long tail), as far as it gets. */
  hotTailWarm: number
  /** Hot key expiry: the reads start this long (s) after the hot burst; < TTL. */
  hotLeadS: number
  /** Hot key expiry: the reads go on this long (s) after the hot keys' TTL; the tail burst starts this long after the hot one. < hotLeadS. */
  hotAfterS: number
  penetrationS: number
  avalancheS: number
  avalancheWarm: number
  redisDownAtS: number
  redisDownS: number
  likeStormS: number
  likeRate: number
  /** Viral: likers of the one video seeded before the storm (PostgreSQL rows, Redis members). */
  viralLikers: number
  /** Viral: users of the storm (the catalog's, then as many seeded ones as it lacks). */
  viralUsers: number
  abusiveBaselineS: number
  abusiveS: number
  /** Burst: requests in flight at once (closed loop, all instances together). */
  burstInFlight: number
  /** Burst: requests of the cold-video and of the absent-id burst. */
  burstRequests: number
  /** Burst: longest a burst may run (s); what is not sent by then is not sent. */
  burstMaxS: number
}

export const QUICK: Params = {
  quick: true,
  videos: 5_000,
  users: 1_000,
  instances: 2,
  ttlMs: 2_000,
  readRate: 300,
  connections: 16,
  hotKeys: 300,
  hotTailWarm: 5_000,
  hotLeadS: 1.4,
  hotAfterS: 0.6,
  penetrationS: 2,
  avalancheS: 5,
  avalancheWarm: 500,
  redisDownAtS: 2,
  redisDownS: 1.5,
  likeStormS: 2,
  likeRate: 300,
  viralLikers: 50_000,
  viralUsers: 2_000,
  abusiveBaselineS: 1,
  abusiveS: 2,
  burstInFlight: 1_000,
  burstRequests: 2_000,
  burstMaxS: 8,
}

export const FULL: Params = {
  quick: false,
  videos: 100_000,
  users: 2_000,
  instances: 4,
  ttlMs: 20_000,
  readRate: 600,
  connections: 32,
  hotKeys: 2_000,
  hotTailWarm: 100_000,
  hotLeadS: 14,
  hotAfterS: 6,
  penetrationS: 15,
  avalancheS: 46,
  avalancheWarm: 5_000,
  redisDownAtS: 26,
  redisDownS: 10,
  likeStormS: 60,
  likeRate: 500,
  viralLikers: 1_000_000,
  viralUsers: 10_000,
  abusiveBaselineS: 5,
  abusiveS: 15,
  burstInFlight: 1_000,
  burstRequests: 10_000,
  burstMaxS: 30,
}

/** What every scenario gets: the deployments, the catalog, users and the admin connection. */
export interface Context {
  params: Params
  deployments: Record<ModeName, ModeDeployment>
  /** Published public live video ids by popularity rank (rank 1 first). */
  idsByRank: string[]
  /** Ids above every video id (never exist). */
  missingIdFloor: bigint
  /** User ids (digits) of the seeded users. */
  userIds: string[]
  jwtSecret: string
  /** The database's installation id (`service_meta`), every token's `aud`; undefined before migration 0003. */
  audience: string | undefined
  /** Connected to database `postgres` (pg_stat_database, per-mode row checks use their own clients). */
  admin: pg.Client
  /** The per-mode database name. */
  databaseOf(mode: ModeName): string
  log(message: string): void
}

/** An HS256 bearer token video-api accepts (iss video-api, aud = installation id, sub = user id, 1 h). */
export function bearer(ctx: Pick<Context, 'jwtSecret' | 'audience'>, userId: string): string {
  const secret = ctx.jwtSecret
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const now = Math.floor(Date.now() / 1000)
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: userId, iss: 'video-api', aud: ctx.audience, iat: now, exp: now + 3600 })}`
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`
}

/**
 * A normal user's address (X-Forwarded-For, TRUST_PROXY=true): one of 256 in 10.0.0.0/24, so
 * the rate limiter's per-address keys stay a fixed set and no normal address nears its quota.
 */
export function randomIp(): string {
  return `10.0.0.${Math.floor(Math.random() * 256)}`
}

/**
 * The bench's own requests (warm-up bursts, /metrics scrapes) also pass the rate limiter, which
 * limits every route: each gets a fresh address from 10.1.0.0/16 so they are never limited.
 */
export function benchIp(): string {
  const n = Math.floor(Math.random() * 65_536)
  return `10.1.${n >> 8}.${n & 255}`
}
