import { setInterval } from 'node:timers'

/**
 * This process's event-loop stalls, for timing bounds on a shared, loaded machine: a timer due
 * every `everyMs` (ms) that fires later than that was held up by the loop (GC, other work, a
 * starved CPU), and an answer timed across such a stall took that much longer through no fault
 * of the code under test. Stop it with {@link LoopStalls.stop}.
 */
export class LoopStalls {
  /** Each stall: the epoch ms its timer fired and how late (ms); it covered [at − ms, at]. */
  private readonly stalls: { at: number; ms: number }[] = []
  private readonly timer: NodeJS.Timeout

  constructor(everyMs = 10) {
    let last = Date.now()
    this.timer = setInterval(() => {
      const now = Date.now()
      const late = now - last - everyMs
      if (late > 0) this.stalls.push({ at: now, ms: late })
      last = now
    }, everyMs)
    this.timer.unref()
  }

  /** Stall time (ms) overlapping the span [fromMs, toMs] (epoch ms). */
  during(fromMs: number, toMs: number): number {
    let total = 0
    for (const { at, ms } of this.stalls) total += Math.max(0, Math.min(at, toMs) - Math.max(at - ms, fromMs))
    return total
  }

  stop(): void {
    clearInterval(this.timer)
  }
}
