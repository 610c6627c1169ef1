/**
 * Defaults of every Redis wait on a request path, in one place (ms).
 *
 * - `timeoutMs` 50: the time Redis gets while this process sits idle waiting for it. A local
 *   Redis answers in well under 1 ms; 50 ms of an idle event loop without a reply is an outage.
 * - `maxWaitMs` 2,000: the longest wall-clock wait, however busy the process: long enough for
 *   replies a saturated box delays by hundreds of ms, short enough to bound a hung call
 *   (docs/decisions/0001-loop-aware-deadlines.md).
 */
export const DEADLINE_DEFAULTS = { timeoutMs: 50, maxWaitMs: 2_000 } as const

/**
 * Start-up bound (ms): how long a primitive used before its client's first connection waits for
 * that connection (the offline queue is off, so a command sent earlier would fail at once). Counted
 * from the first use of the client by any primitive; past it, calls go to Redis and its fallback.
 */
export const STARTUP_DEFAULTS = { waitMs: 2_000 } as const
