import { performance } from 'node:perf_hooks'

const timing = performance.nodeTiming

/**
 * Milliseconds this thread's event loop has spent idle (blocked in the poll phase, waiting for
 * I/O) since it started: libuv's loop idle time (`performance.nodeTiming.idleTime`, what
 * `performance.eventLoopUtilization()` reports without building its object; 0 before the loop
 * starts). Up to date whenever a callback runs after a poll phase (timers, I/O, immediates).
 */
export function loopIdleMs(): number {
  return timing.idleTime
}
