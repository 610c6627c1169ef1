import { MODE_LABEL, MODES, type ModeName } from './modes.js'
import type { Invariant } from './scenario.js'

/** One burst phase of one mode, as the invariants read it. */
export interface BurstPhaseFigures {
  /** Requests sent. */
  requests: number
  /** DB statements the burst caused (`db_queries_total`). */
  dbStatements: number
  /**
   * 5xx answers and request errors (no answer within the client's timeout, socket errors); not the
   * requests still in flight when the burst hit its deadline (a bench time cap, not a failure).
   */
  failed: number
}

/** What one mode's burst measured. */
export interface BurstFigures {
  instances: number
  /** DB statements of one lone cold read on the same deployment, measured before the bursts. */
  statementsPerLoad: number
  cold: BurstPhaseFigures
  absent: BurstPhaseFigures
  quota: BurstPhaseFigures & { admitted: number; bound: number }
}

/**
 * Share of absent-id requests allowed to reach PostgreSQL: the Bloom gate's false positives at
 * the service's default size are orders of magnitude fewer; the rest is headroom for background statements.
 */
export const ABSENT_MAX_DB_SHARE = 0.01

/** DB statements per 1,000 requests (0 without requests). */
export function per1k(statements: number, requests: number): number {
  return requests === 0 ? 0 : Math.round((10_000 * statements) / requests) / 10
}

/**
 * floodgate's cold burst of one video: at most one load per instance (singleflight in each
 * process; the cross-instance lock makes it one in all, a waiter that gives up loads once for
 * its process), so DB statements ≤ instances × one cold read's, whatever the number of requests.
 */
export function coldBurstBounded(f: BurstFigures): Invariant {
  const bound = f.instances * Math.max(1, f.statementsPerLoad)
  return {
    name: 'floodgate cold-video burst: DB statements ≤ instances × one cold read’s',
    ok: f.cold.dbStatements <= bound,
    detail: `${f.cold.dbStatements} statements for ${f.cold.requests} requests (${per1k(f.cold.dbStatements, f.cold.requests)} per 1,000), bound ${f.instances} × ${Math.max(1, f.statementsPerLoad)} = ${bound}`,
  }
}

/** floodgate's absent-id burst: ids that never existed stop at the Bloom gate. */
export function absentIdsGated(f: BurstFigures): Invariant {
  const bound = Math.floor(ABSENT_MAX_DB_SHARE * f.absent.requests)
  return {
    name: `floodgate absent-id burst: DB statements ≤ ${100 * ABSENT_MAX_DB_SHARE}% of requests`,
    ok: f.absent.dbStatements <= bound,
    detail: `${f.absent.dbStatements} statements for ${f.absent.requests} requests, bound ${bound}`,
  }
}

/** Every mode (one limiter in all): the user's 2xx ≤ the sliding-window bound of its quota. */
export function admittedWithinQuota(figures: Record<ModeName, BurstFigures>): Invariant {
  return {
    name: 'quota burst: admitted ≤ quota (sliding-window bound)',
    ok: MODES.every((m) => figures[m].quota.admitted <= figures[m].quota.bound),
    detail: MODES.map(
      (m) => `${MODE_LABEL[m]} ${figures[m].quota.admitted} / ${figures[m].quota.bound}`,
    ).join(', '),
  }
}

/** floodgate: nothing failed (Redis and PostgreSQL are up, only busy), so no 5xx and no request error. */
export function noFailures(f: BurstFigures): Invariant {
  const phases = { cold: f.cold, absent: f.absent, quota: f.quota }
  return {
    name: 'floodgate: no 5xx, no request error',
    ok: Object.values(phases).every((p) => p.failed === 0),
    detail: Object.entries(phases)
      .map(([name, p]) => `${name} ${p.failed}`)
      .join(', '),
  }
}
