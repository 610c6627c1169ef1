import { performance } from 'node:perf_hooks'

/**
 * Milliseconds this thread's event loop has spent idle (blocked in the poll phase, waiting for
 * I/O) since it started: libuv's loop idle time, as `performance.eventLoopUtilization()` reports
 * it. Up to date whenever a callback runs after a poll phase (timers, I/O, immediates). ~100 ns.
 */
export function loopIdleMs(): number {
  return performance.eventLoopUtilization().idle
}
