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

  it("wraps the cache's Redis steps: Bloom check, L2 read, lock claim and wait, fill", async () => {
    spans.length = 0
    const gate = { mightContain: async (items: readonly string[]) => items.map((item) => item !== 'ghost') }
    const [holder, waiter] = [0, 1].map(() =>
      createCache<string>({ redis: client, prefix, name: 'steps', redisTimeoutMs: 1000, bloom: gate }),
    ) as [ReturnType<typeof createCache<string>>, ReturnType<typeof createCache<string>>]
    await Promise.all([holder.ready, waiter.ready])
    let release = () => {}
    const slow = holder.getOrLoad('k', async () => {
      await new Promise<void>((resolve) => {
        release = resolve
      })
      return 'v'
    })
    await expect.poll(() => spans.some((s) => s.name === 'floodgate.cache.load')).toBe(true)
    const waiting = waiter.getOrLoad('k', async () => 'not me')
    await expect.poll(() => spans.some((s) => s.name === 'floodgate.cache.lock_wait')).toBe(true)
    release()
    expect(await Promise.all([slow, waiting])).toEqual(['v', 'v'])
    expect(await holder.getOrLoad('ghost', async () => 'never')).toBeUndefined()
    for (const cache of [holder, waiter]) cache.close()

    const names = spans.map((s) => s.name)
    for (const step of ['bloom', 'l2_read', 'lock_claim', 'lock_wait', 'load', 'fill'])
      expect(names).toContain(`floodgate.cache.${step}`)
    // holder: bloom, l2_read, lock_claim, load, fill; waiter: bloom, l2_read, lock_claim, lock_wait, l2_read
    expect(names.filter((n) => n === 'floodgate.cache.load')).toHaveLength(1)
    expect(names.filter((n) => n === 'floodgate.cache.fill')).toHaveLength(1)
    expect(spans.every((s) => s.ended)).toBe(true)
    expect(spans.find((s) => s.name === 'floodgate.cache.l2_read')?.attributes).toEqual({
      'floodgate.cache': 'steps',
    })
  })
})
