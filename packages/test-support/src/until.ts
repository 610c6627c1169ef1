import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Polls `condition` every `everyMs` (ms) until it holds; resolves with the ms it took.
 * @throws {Error} naming `what` when it does not hold within `timeoutMs` (ms).
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  { timeoutMs = 5_000, everyMs = 1, what = 'condition' } = {},
): Promise<number> {
  const started = performance.now()
  while (!(await condition())) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what} not met within ${timeoutMs} ms`)
    await sleep(everyMs)
  }
  return performance.now() - started
}
