import { AsyncLocalStorage } from 'node:async_hooks'
import {
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  type Span,
  trace,
} from '@opentelemetry/api'
import { afterAll, describe, expect, it } from 'vitest'
import { createCache, createRedisClient } from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_TARGET, testRedisClient, uniquePrefix } from '../support/redis.js'

// The API's context manager is not shipped with it: a minimal one over AsyncLocalStorage.
class LocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>()
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args))
  }
  bind<T>(_ctx: Context, target: T): T {
    return target
  }
  enable(): this {
    return this
  }
  disable(): this {
    this.storage.disable()
    return this
  }
}

const redis = testRedisClient()
const prefix = uniquePrefix('otel-none')
const client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 1000 })

afterAll(async () => {
  context.disable()
  trace.disable()
  client.disconnect()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('OpenTelemetry without a registered tracer provider', () => {
  it("adds no span of its own: the loader runs under the app's active span; a later provider gets spans", async () => {
    context.setGlobalContextManager(new LocalStorageContextManager())
    const appSpan = trace.wrapSpanContext({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 })
    const cache = createCache<string>({ redis: client, prefix, name: 'none', redisTimeoutMs: 1000 })
    await cache.ready
    let seen: Span | undefined
    const value = await context.with(trace.setSpan(context.active(), appSpan), () =>
      cache.getOrLoad('k', async () => {
        seen = trace.getActiveSpan()
        return 'v'
      }),
    )
    expect(value).toBe('v')
    expect(seen).toBe(appSpan)

    // registered after the cache was made: its spans start at once
    const names: string[] = []
    trace.setGlobalTracerProvider({
      getTracer: () => ({
        startSpan: (name: string) => {
          names.push(name)
          return trace.wrapSpanContext({ traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: 1 })
        },
        startActiveSpan: () => undefined,
      }),
    } as unknown as Parameters<typeof trace.setGlobalTracerProvider>[0])
    await cache.getOrLoad('k2', async () => 'v2')
    cache.close()
    expect(names).toContain('floodgate.cache.l2_read')
    expect(names).toContain('floodgate.cache.load')
  })
})
