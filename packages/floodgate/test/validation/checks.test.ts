import { describe, expect, it } from 'vitest'
import { bucketWeights, decayRatePerMs, InvalidArgumentError, Mutex } from '../../src/index.js'
import { finiteNumber, positiveNumber } from '../../src/validation/index.js'
import { deadRedisClient } from '../support/redis.js'

describe('positiveNumber', () => {
  it('takes a finite number > 0 and names the field otherwise, in the one wording', () => {
    expect(positiveNumber('x', 0.25)).toBe(0.25)
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '1', undefined])
      expect(() => positiveNumber('x', bad)).toThrow(InvalidArgumentError)
    expect(() => positiveNumber('x', 0)).toThrow('x: must be a finite number > 0, got 0')
  })

  it('is the check of the mutex retry base and the decay half-lives', () => {
    expect(() => new Mutex(deadRedisClient(), { lock: 'l', fence: 'f' }, { retryBaseMs: 0 })).toThrow(
      'retryBaseMs: must be a finite number > 0, got 0',
    )
    expect(() => bucketWeights(10, -1)).toThrow('halfLifeMinutes: must be a finite number > 0, got -1')
    expect(() => decayRatePerMs(Number.NaN)).toThrow('halfLifeMs: must be a finite number > 0, got NaN')
  })
})

describe('finiteNumber', () => {
  it('takes any finite number and refuses NaN and ±Infinity by name', () => {
    expect(finiteNumber('score', -1.5)).toBe(-1.5)
    expect(() => finiteNumber('score', Number.NEGATIVE_INFINITY)).toThrow(
      'score: must be a finite number, got -Infinity',
    )
    expect(() => finiteNumber('score', 'nan')).toThrow(InvalidArgumentError)
  })
})
