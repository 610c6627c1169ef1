import { describe, expect, it } from 'vitest'
import { LogThrottle } from '../../src/observability/index.js'

describe('LogThrottle', () => {
  it('admits the first line of a reason, then one per interval with the count skipped meanwhile', () => {
    const throttle = new LogThrottle<string>(1000)
    expect(throttle.admit('a', 0)).toBe(0)
    expect(throttle.admit('a', 10)).toBeUndefined()
    expect(throttle.admit('a', 999)).toBeUndefined()
    expect(throttle.admit('b', 999)).toBe(0) // reasons are throttled apart
    expect(throttle.admit('a', 1000)).toBe(2)
    expect(throttle.admit('a', 1500)).toBeUndefined()
    expect(throttle.admit('a', 2000)).toBe(1)
  })
})
