import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config/index.js'
import { interactionsFromConfig } from '../src/interactions/from_config.js'

describe('interaction config', () => {
  it('defaults to the documented values', () => {
    expect(interactionsFromConfig(loadConfig({ env: {} }))).toEqual({
      interactions: { partitions: 300, topK: 1000, playDedupeWindowMs: 600_000, maxEventsPerCall: 256 },
      flush: { batchSize: 5000, claimIdleMs: 30_000, maxDeliveries: 5 },
    })
  })

  it('takes overrides and refuses bad values naming the field', () => {
    const config = loadConfig({
      env: {
        INTERACTION_PARTITIONS: '4',
        PLAY_DEDUPE_WINDOW_MS: '60000',
        FLUSH_BATCH_SIZE: '250',
        INTERACTION_MAX_EVENTS_PER_CALL: '1',
      },
    })
    expect(interactionsFromConfig(config)).toMatchObject({
      interactions: { partitions: 4, playDedupeWindowMs: 60_000, maxEventsPerCall: 1 },
      flush: { batchSize: 250 },
    })
    for (const [name, value] of [
      ['INTERACTION_PARTITIONS', '0'],
      ['INTERACTION_MAX_EVENTS_PER_CALL', '0'],
      ['INTERACTION_MAX_EVENTS_PER_CALL', '257'],
      ['INTERACTION_WAIT_REPLICAS', '-1'],
      ['INTERACTION_WAIT_TIMEOUT_MS', '0'],
      ['FLUSH_CLAIM_IDLE_MS', '10'],
      ['FLUSH_MAX_DELIVERIES', 'x'],
    ] as const) {
      expect(() => loadConfig({ env: { [name]: value } })).toThrow(ConfigError)
      expect(() => loadConfig({ env: { [name]: value } })).toThrow(name)
    }
  })

  it('INTERACTION_WAIT_REPLICAS > 0 turns on durable acknowledgement (WAIT), with its timeout', () => {
    const on = loadConfig({
      env: {
        INTERACTION_WAIT_REPLICAS: '1',
        INTERACTION_WAIT_TIMEOUT_MS: '200',
        REDIS_COMMAND_TIMEOUT_MS: '500',
      },
    })
    expect(interactionsFromConfig(on).interactions.waitForReplicas).toEqual({ replicas: 1, timeoutMs: 200 })
    const off = loadConfig({ env: { INTERACTION_WAIT_TIMEOUT_MS: '200' } })
    expect(interactionsFromConfig(off).interactions).not.toHaveProperty('waitForReplicas')
  })

  it('INTERACTION_WAIT_TIMEOUT_MS must be below REDIS_MAX_WAIT_MS when WAIT is on', () => {
    // WAIT runs on a connection with the client's command timeout (REDIS_MAX_WAIT_MS): as long a
    // WAIT fails as "Redis unavailable"
    const env = {
      INTERACTION_WAIT_REPLICAS: '1',
      INTERACTION_WAIT_TIMEOUT_MS: '50',
      REDIS_COMMAND_TIMEOUT_MS: '50',
      REDIS_MAX_WAIT_MS: '50',
    }
    expect(() => loadConfig({ env })).toThrow(ConfigError)
    expect(() => loadConfig({ env })).toThrow(
      /^INTERACTION_WAIT_TIMEOUT_MS: must be below REDIS_MAX_WAIT_MS \(50\)/,
    )
    expect(loadConfig({ env: { ...env, INTERACTION_WAIT_TIMEOUT_MS: '49' } }).interactionWaitTimeoutMs).toBe(
      49,
    )
    // off: the timeout is unused, so it is not checked
    expect(loadConfig({ env: { ...env, INTERACTION_WAIT_REPLICAS: '0' } }).interactionWaitReplicas).toBe(0)
    // the defaults (25 ms, 50 ms) pass
    expect(loadConfig({ env: { INTERACTION_WAIT_REPLICAS: '1' } }).interactionWaitTimeoutMs).toBe(25)
  })

  it('REDIS_MAX_WAIT_MS must not be below REDIS_COMMAND_TIMEOUT_MS', () => {
    const env = { REDIS_COMMAND_TIMEOUT_MS: '100', REDIS_MAX_WAIT_MS: '99' }
    expect(() => loadConfig({ env })).toThrow(
      /^REDIS_MAX_WAIT_MS: must be at least REDIS_COMMAND_TIMEOUT_MS \(100\)/,
    )
    expect(loadConfig({ env: { ...env, REDIS_MAX_WAIT_MS: '100' } }).redisMaxWaitMs).toBe(100)
  })
})
