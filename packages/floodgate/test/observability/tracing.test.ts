import { type Span, type SpanOptions, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCache, createRateLimiter, createRedisClient, Mutex } from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_TARGET, testRedisClient, uniquePrefix } from '../support/redis.js'

interface Recorded {
  name: string
  attributes: SpanOptions['attributes']
  status?: number
  exception?: unknown
  ended: boolean
}

// A tracer provider that records spans in memory (the API's own test double is not shipped).
const spans: Recorded[] = []
const tracer = {
  startSpan(name: string, options: SpanOptions = {}): Span {
    const record: Recorded = { name, attributes: options.attributes, ended: false }
    spans.push(record)
    const span = {
      spanContext: () => ({ traceId: '1'.padStart(32, '0'), spanId: '1'.padStart(16, '0'), traceFlags: 1 }),
      setAttribute: () => span,
      setAttributes: () => span,
      addEvent: () => span,
      addLink: () => span,
      addLinks: () => span,
      setStatus: (status: { code: number }) => {
        record.status = status.code
        return span
      },
      updateName: () => span,
      end: () => {
        record.ended = true
      },
      isRecording: () => true,
      recordException: (exception: unknown) => {
        record.exception = exception
      },
    }
    return span as unknown as Span
  },
} as unknown as Tracer

const redis = testRedisClient()
const prefix = uniquePrefix('otel')
const client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 1000 })

beforeAll(() => {
  trace.setGlobalTracerProvider({ getTracer: () => tracer })
})

afterAll(async () => {
  trace.disable()
  client.disconnect()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('OpenTelemetry spans (optional @opentelemetry/api)', () => {
  it('wraps cache loads, limiter decisions and mutex acquisitions; a failed load is marked', async () => {
    const cache = createCache<string>({ redis: client, prefix, name: 'videos', redisTimeoutMs: 1000 })
    await cache.ready
    await cache.getOrLoad('v1', async () => 'v')
    await expect(
      cache.getOrLoad('v2', async () => {
        throw new Error('db down')
      }),
    ).rejects.toThrow('db down')
    cache.close()
    const limiter = createRateLimiter({
      redis: client,
      prefix,
      name: 'api',
      algorithm: 'gcra',
      limit: 5,
      windowMs: 1000,
    })
    await limiter.limit('u')
    const lease = await Mutex.named(client, prefix, 'job').acquire()
    await lease.release()

    const loads = spans.filter((s) => s.name === 'floodgate.cache.load')
    expect(loads).toHaveLength(2)
    expect(loads[0]).toMatchObject({ attributes: { 'floodgate.cache': 'videos' }, ended: true })
    expect(loads[1]).toMatchObject({ status: SpanStatusCode.ERROR, ended: true })
    expect(spans).toContainEqual(
      expect.objectContaining({
        name: 'floodgate.ratelimit.decide',
        attributes: { 'floodgate.policy': 'api', 'floodgate.algorithm': 'gcra' },
        ended: true,
      }),
    )
    expect(spans).toContainEqual(
      expect.objectContaining({ name: 'floodgate.mutex.try_acquire', ended: true }),
    )
  })
})
