import { afterEach, describe, expect, it } from 'vitest'
import { positiveIntegerEnv } from '../env_integer.js'

const NAME = 'BENCH_TEST_ENV_INTEGER'

describe('positiveIntegerEnv', () => {
  afterEach(() => {
    delete process.env[NAME]
  })

  it('reads a positive integer, and undefined when unset', () => {
    expect(positiveIntegerEnv(NAME, 'µs')).toBeUndefined()
    process.env[NAME] = '2000'
    expect(positiveIntegerEnv(NAME, 'µs')).toBe(2000)
  })

  it('refuses any other text, naming the variable and its unit', () => {
    for (const text of ['2ms', '1e3', '0', '-5', ' 5', '', '1.5', '99999999999999999999']) {
      process.env[NAME] = text
      expect(() => positiveIntegerEnv(NAME, 'ms')).toThrow(
        `${NAME} must be a positive integer (ms), got ${text}`,
      )
    }
  })
})
