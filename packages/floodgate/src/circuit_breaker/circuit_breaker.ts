import { positiveInteger } from '../validation/index.js'
import { BREAKER_DEFAULTS } from './defaults.js'

/** `closed`: calls pass. `open`: calls are refused until the cool-down ends. `half_open`: one probe is in flight. */
export type BreakerState = 'closed' | 'open' | 'half_open'

/** Options of {@link CircuitBreaker}. */
export interface CircuitBreakerOptions {
  /** Consecutive failures that open the breaker. @default 5 */
  failureThreshold?: number
  /**
   * Time (ms) the breaker stays open before it lets one probe through ({@link CircuitBreaker.probeNow}
   * ends it sooner). @default 5_000
   */
  coolDownMs?: number
  /** Called on every state change. */
  onStateChange?: (state: BreakerState, previous: BreakerState) => void
  /** Clock (ms epoch); injectable for tests. @default Date.now */
  now?: () => number
}

/**
 * A consecutive-failure circuit breaker (Nygard, "Release It!", ch. 5):
 * closed → open after `failureThreshold` consecutive failures; open → half-open
 * once `coolDownMs` has passed, admitting exactly one probe; the probe's
 * success closes it, its failure re-opens it for another cool-down. {@link probeNow} ends a
 * cool-down early, for an owner that learns the dependency is back (a reconnect).
 */
export class CircuitBreaker {
  private stateValue: BreakerState = 'closed'
  private failures = 0
  /** When (ms, `now()`) an open breaker admits its probe. */
  private probeAtMs = 0
  private probeInFlight = false
  private readonly threshold: number
  private readonly coolDownMs: number
  private readonly onStateChange: ((state: BreakerState, previous: BreakerState) => void) | undefined
  private readonly now: () => number

  /** @throws {InvalidArgumentError} when a number is not an integer ≥ 1. */
  constructor(options: CircuitBreakerOptions = {}) {
    this.threshold = options.failureThreshold ?? BREAKER_DEFAULTS.failureThreshold
    this.coolDownMs = options.coolDownMs ?? BREAKER_DEFAULTS.coolDownMs
    positiveInteger('failureThreshold', this.threshold)
    positiveInteger('coolDownMs', this.coolDownMs)
    this.onStateChange = options.onStateChange
    this.now = options.now ?? Date.now
  }

  /** Current state (an open breaker whose cool-down ended still reads `open` until a call asks). */
  get state(): BreakerState {
    return this.stateValue
  }

  /**
   * Asks whether a call may go through. In `open` past the cool-down this moves
   * to `half_open` and admits the caller as the single probe; it must then report
   * {@link success} or {@link failure}.
   */
  allow(): boolean {
    if (this.stateValue === 'closed') return true
    if (this.stateValue === 'open') {
      if (this.now() < this.probeAtMs) return false
      this.transition('half_open')
      this.probeInFlight = true
      return true
    }
    if (this.probeInFlight) return false
    this.probeInFlight = true
    return true
  }

  /**
   * Ends the cool-down of an open breaker now: the next {@link allow} admits the probe. For an
   * owner that knows the dependency is back (e.g. its connection is ready again); the probe still
   * decides. No effect unless `open`.
   */
  probeNow(): void {
    if (this.stateValue === 'open') this.probeAtMs = Number.NEGATIVE_INFINITY
  }

  /**
   * Reports a successful call. In `open` it changes nothing: that call was admitted before the
   * breaker opened, and one late answer does not outweigh the failures that opened it; the probe
   * decides.
   */
  success(): void {
    if (this.stateValue === 'open') return
    this.failures = 0
    if (this.stateValue === 'half_open') {
      this.probeInFlight = false
      this.transition('closed')
    }
  }

  /**
   * Reports a call that says nothing about the dependency (e.g. it timed out because this process
   * was too busy to read the reply): the failure count is unchanged, and a half-open probe is
   * released so the next caller probes again.
   */
  inconclusive(): void {
    if (this.stateValue === 'half_open') this.probeInFlight = false
  }

  /** Reports a failed call. */
  failure(): void {
    this.failures++
    if (this.stateValue === 'half_open') {
      this.probeInFlight = false
      this.open()
    } else if (this.stateValue === 'closed' && this.failures >= this.threshold) {
      this.open()
    }
  }

  private open(): void {
    this.probeAtMs = this.now() + this.coolDownMs
    this.transition('open')
  }

  private transition(next: BreakerState): void {
    const previous = this.stateValue
    if (previous === next) return
    this.stateValue = next
    this.onStateChange?.(next, previous)
  }
}
