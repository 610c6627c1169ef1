import { assertIntegerIn } from '../rankings/options.js'

/** Options of {@link ClientTracking}. */
export interface ClientTrackingOptions {
  /**
   * How often (ms) the invalidation connection is pinged. A pong proves every invalidation Redis
   * sent before it was delivered; a connection that dies silently (no FIN, e.g. a partition) is
   * therefore noticed, and everything tracked dropped, within `heartbeatMs + heartbeatTimeoutMs`.
   * @default 1_000
   */
  heartbeatMs?: number
  /**
   * Idle event-loop time (ms) a heartbeat PING gets before the invalidation connection is taken
   * for dead (time this process spent busy elsewhere does not count; `withinDeadline`).
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
  heartbeatMs: 1_000,
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
  return {
    heartbeatMs: assertIntegerIn('heartbeatMs', options.heartbeatMs ?? d.heartbeatMs, 10, 600_000),
    heartbeatTimeoutMs: assertIntegerIn(
      'heartbeatTimeoutMs',
      options.heartbeatTimeoutMs ?? d.heartbeatTimeoutMs,
      1,
      600_000,
    ),
    connectionName: options.connectionName ?? d.connectionName,
  }
}
