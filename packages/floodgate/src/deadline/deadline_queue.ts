import { loopIdleMs } from './idle_clock.js'

/** One call waiting under a {@link DeadlineQueue}. Times in ms. */
export interface Watched {
  /** `performance.now()` when the call was sent. */
  readonly startedMs: number
  /** {@link loopIdleMs} when the call was sent. */
  readonly idleAtStartMs: number
  /** Set by the watcher once the call settled: the queue drops it. */
  settled: boolean
  /** The deadline passed first (called after one poll phase, only if still not settled). */
  expire(loopStalled: boolean): void
}

/**
 * The calls waiting under one deadline (`timeoutMs` of idle loop, `maxWaitMs` of wall clock),
 * oldest first, behind one timer. Calls under equal deadlines run out in the order they were sent
 * on both clocks (an older call has waited at least as long, idle and wall), so only the head
 * needs a timer: settled calls leave from the front, and a timer firing expires the heads that ran
 * out, then re-arms for the first one that did not: one timer per deadline length, not one per call.
 */
export class DeadlineQueue {
  private items: Watched[] = []
  private head = 0
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly timeoutMs: number,
    private readonly maxWaitMs: number,
  ) {}

  /** Starts watching `call` (sent just now: the newest). */
  add(call: Watched): void {
    this.items.push(call)
    if (this.timer === undefined) this.arm(this.timeoutMs)
  }

  /** Drops settled calls from the front; called when a watched call settles. */
  trim(): void {
    const items = this.items
    let head = this.head
    while (head < items.length && items[head]!.settled) head++
    if (head === items.length) {
      items.length = 0
      head = 0
    } else if (head >= 1024 && head * 2 >= items.length) {
      this.items = items.slice(head)
      head = 0
    }
    this.head = head
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), ms)
  }

  /**
   * Expires every head that ran out; a reply gets one poll phase (`setImmediate`) to win, since
   * timers run before I/O in a loop iteration and a reply may have landed while the loop was blocked.
   */
  private check(): void {
    this.timer = undefined
    this.trim()
    const nowMs = performance.now()
    const idleNowMs = loopIdleMs()
    const expired: Watched[] = []
    const stalled: boolean[] = []
    const items = this.items
    while (this.head < items.length) {
      const call = items[this.head]!
      if (call.settled) {
        this.head++
        continue
      }
      const idleMs = idleNowMs - call.idleAtStartMs
      const waitedMs = nowMs - call.startedMs
      if (idleMs < this.timeoutMs && waitedMs < this.maxWaitMs) {
        const nextMs = Math.min(this.timeoutMs - idleMs, this.maxWaitMs - waitedMs)
        this.arm(Math.max(1, Math.ceil(nextMs)))
        break
      }
      expired.push(call)
      stalled.push(idleMs < this.timeoutMs)
      this.head++
    }
    this.trim()
    if (expired.length > 0)
      setImmediate(() => {
        for (let i = 0; i < expired.length; i++) if (!expired[i]!.settled) expired[i]!.expire(stalled[i]!)
      })
  }
}

const queues = new Map<number, Map<number, DeadlineQueue>>()
// most processes use one or two deadline lengths: the last one asked for skips the maps
let last: { timeoutMs: number; maxWaitMs: number; queue: DeadlineQueue } | undefined

/** The shared queue of a deadline length (ms), created on first use and kept (a few per process). */
export function deadlineQueue(timeoutMs: number, maxWaitMs: number): DeadlineQueue {
  if (last !== undefined && last.timeoutMs === timeoutMs && last.maxWaitMs === maxWaitMs) return last.queue
  let byMaxWait = queues.get(timeoutMs)
  if (byMaxWait === undefined) {
    byMaxWait = new Map()
    queues.set(timeoutMs, byMaxWait)
  }
  let queue = byMaxWait.get(maxWaitMs)
  if (queue === undefined) {
    queue = new DeadlineQueue(timeoutMs, maxWaitMs)
    byMaxWait.set(maxWaitMs, queue)
  }
  last = { timeoutMs, maxWaitMs, queue }
  return queue
}
