import { integerIn } from '../validation/index.js'

/** Options of {@link ClientTracking}. */
export interface ClientTrackingOptions {
  /**
   * How often (ms) the invalidation connection is pinged. A pong proves that every invalidation
   * Redis sent before it has been received.
   * @default 250
   */
  heartbeatMs?: number
  /**
   * Longest time (ms, wall clock) since the invalidation connection last proved alive (a pong or
   * a message) during which kept values are valid. Past it (Redis stalled, a partition, this
   * process too busy to read its socket) nothing is served as tracked until it speaks again:
   * so a kept value is never more than this far behind Redis, even when invalidations cannot
   * arrive. The same bound as `LiveCounts.maxAgeMs` by default.
   * @default 1_000
   */
  maxSilenceMs?: number
  /**
   * Idle event-loop time (ms) a heartbeat PING gets before the invalidation connection is taken
   * for dead, everything kept dropped and the connection made again (time this process spent
   * busy elsewhere does not count; `withinDeadline`).
   * @default 1_000
   */
  heartbeatTimeoutMs?: number
  /**
   * `CLIENT SETNAME` of the two connections (`<name>:data`, `<name>:invalidate`), so `CLIENT LIST`
   * shows them.
   * @default 'floodgate-tracking'
   */
  connectionName?: string
}

/** The defaults of {@link ClientTrackingOptions}, in one place. */
export const CLIENT_TRACKING_DEFAULTS = {
  heartbeatMs: 250,
  maxSilenceMs: 1_000,
  heartbeatTimeoutMs: 1_000,
  connectionName: 'floodgate-tracking',
} as const

export type ResolvedClientTrackingOptions = Required<ClientTrackingOptions>

/**
 * Defaults applied and numbers checked.
 * @throws {InvalidArgumentError} for a bound that is not an integer in range.
 */
export function resolveClientTrackingOptions(options: ClientTrackingOptions): ResolvedClientTrackingOptions {
  const d = CLIENT_TRACKING_DEFAULTS
  const heartbeatMs = integerIn('heartbeatMs', options.heartbeatMs ?? d.heartbeatMs, 10, 600_000)
  return {
    heartbeatMs,
    maxSilenceMs: integerIn('maxSilenceMs', options.maxSilenceMs ?? d.maxSilenceMs, heartbeatMs, 3_600_000),
    heartbeatTimeoutMs: integerIn(
      'heartbeatTimeoutMs',
      options.heartbeatTimeoutMs ?? d.heartbeatTimeoutMs,
      1,
      600_000,
    ),
    connectionName: options.connectionName ?? d.connectionName,
  }
}
