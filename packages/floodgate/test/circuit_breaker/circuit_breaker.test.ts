import { describe, expect, it } from 'vitest'
import { type BreakerState, CircuitBreaker, InvalidArgumentError } from '../../src/index.js'

function breaker() {
  let now = 0
  const changes: BreakerState[] = []
  const b = new CircuitBreaker({
    failureThreshold: 3,
    coolDownMs: 1000,
    now: () => now,
    onStateChange: (state) => changes.push(state),
  })
  return { b, changes, advance: (ms: number) => (now += ms) }
}

describe('CircuitBreaker', () => {
  it('opens after N consecutive failures, not after N scattered ones', () => {
    const { b } = breaker()
    b.failure()
    b.failure()
    b.success()
    b.failure()
    b.failure()
    expect(b.state).toBe('closed')
    b.failure()
    expect(b.state).toBe('open')
    expect(b.allow()).toBe(false)
  })

  it('half-opens after the cool-down with exactly one probe; success closes', () => {
    const { b, changes, advance } = breaker()
    for (let i = 0; i < 3; i++) b.failure()
    advance(999)
    expect(b.allow()).toBe(false)
    advance(1)
    expect(b.allow()).toBe(true)
    expect(b.state).toBe('half_open')
    expect(b.allow()).toBe(false) // the probe is in flight
    b.success()
    expect(b.state).toBe('closed')
    expect(b.allow()).toBe(true)
    expect(changes).toEqual(['open', 'half_open', 'closed'])
  })

  it('a failed probe re-opens for another full cool-down', () => {
    const { b, advance } = breaker()
    for (let i = 0; i < 3; i++) b.failure()
    advance(1000)
    expect(b.allow()).toBe(true)
    b.failure()
    expect(b.state).toBe('open')
    advance(500)
    expect(b.allow()).toBe(false)
    advance(500)
    expect(b.allow()).toBe(true)
  })

  it('probeNow ends the cool-down: the next call is the one probe, whose failure re-opens for a full one', () => {
    const { b, changes, advance } = breaker()
    b.probeNow() // closed: nothing to do
    expect(b.state).toBe('closed')
    for (let i = 0; i < 3; i++) b.failure()
    advance(10)
    expect(b.allow()).toBe(false)
    b.probeNow()
    expect(b.allow()).toBe(true)
    expect(b.state).toBe('half_open')
    expect(b.allow()).toBe(false) // still one probe
    b.probeNow() // half-open: the probe in flight decides
    expect(b.allow()).toBe(false)
    b.failure()
    expect(b.state).toBe('open')
    advance(999)
    expect(b.allow()).toBe(false)
    advance(1)
    expect(b.allow()).toBe(true)
    b.success()
    expect(changes).toEqual(['open', 'half_open', 'open', 'half_open', 'closed'])
  })

  it('a call admitted before it opened and answering after does not close it: only a probe does', () => {
    const { b, changes, advance } = breaker()
    expect(b.allow()).toBe(true) // a slow call, in flight while the next ones fail
    for (let i = 0; i < 3; i++) b.failure()
    b.success() // the slow call answers
    expect(b.state).toBe('open')
    expect(b.allow()).toBe(false)
    advance(1000)
    expect(b.allow()).toBe(true)
    b.success()
    expect(changes).toEqual(['open', 'half_open', 'closed'])
  })

  it('rejects bad options naming the field', () => {
    expect(() => new CircuitBreaker({ coolDownMs: 0 })).toThrow(InvalidArgumentError)
    expect(() => new CircuitBreaker({ failureThreshold: 1.5 })).toThrow(/failureThreshold/)
  })
})
