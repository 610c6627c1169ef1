import { EventEmitter } from 'node:events'
import type { ShedReason } from './errors.js'

/** Events a {@link ConcurrencyGuard} emits. `waitedMs`: time spent in the queue (ms), 0 when a slot was free. */
export interface GuardEvents {
  /** A call got a slot and its function starts now. */
  admitted: [{ waitedMs: number }]
  /** A call was refused; its function never ran. */
  shed: [{ reason: ShedReason; waitedMs: number }]
}

/** Typed `EventEmitter` of {@link GuardEvents}. */
export class GuardEventEmitter extends EventEmitter<GuardEvents> {}
