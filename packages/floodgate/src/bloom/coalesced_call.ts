/**
 * Shares one call among the callers that asked before it was sent: the first caller sends it at
 * once; callers arriving while it is in flight share the next one, sent as soon as it settles.
 * So every caller gets a result read after it asked (what a causality check needs), and a burst
 * of N callers costs two calls per round trip, not N.
 */
export class CoalescedCall<T> {
  private inFlight: Promise<T> | undefined
  private queued: Promise<T> | undefined
  /** Calls sent so far. */
  sent = 0

  constructor(private readonly call: () => Promise<T>) {}

  /** The result of a call sent after this method was called. */
  next(): Promise<T> {
    const current = this.inFlight
    if (current === undefined) return this.send()
    this.queued ??= current.then(
      () => this.sendQueued(),
      () => this.sendQueued(),
    )
    return this.queued
  }

  private sendQueued(): Promise<T> {
    this.queued = undefined
    return this.send()
  }

  private send(): Promise<T> {
    this.sent++
    let call: Promise<T>
    try {
      call = this.call()
    } catch (error) {
      call = Promise.reject(error)
    }
    this.inFlight = call
    const clear = () => {
      if (this.inFlight === call) this.inFlight = undefined
    }
    call.then(clear, clear)
    return call
  }
}
