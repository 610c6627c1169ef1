import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import {
  createRedisClient,
  KeySpace,
  type RateLimitMode,
  type RateLimitPolicy,
  rateLimitKeys,
} from 'floodgate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addressKey, ipv6Groups } from '../src/rate_limit/client_key.js'
import { parseRouteQuotas } from '../src/rate_limit/quotas.js'
import { routeLimiters } from '../src/rate_limit/route_limiters.js'
import { createTestApp, registerUser, secondInstance, TEST_REDIS_URL, type TestApp } from './support/app.js'
import { expectRateLimited } from './support/rate_limited.js'

// Headers and 429s of the rate-limit plugin, on the real Redis (unique key prefix per app).
const quotas = {
  user: { limit: 5, windowMs: 60_000 },
  anonymous: { limit: 3, windowMs: 60_000 },
  write: { limit: 2, windowMs: 60_000 },
  auth: { limit: 4, windowMs: 60_000 },
  routes: { 'GET /videos/:id': { limit: 1, windowMs: 10_000 } },
}

/** An anonymous read that needs neither the database nor Redis (the probes are not limited). */
const CHEAP_READ = '/docs/json'

/** The database, Redis and key prefix every app of this file shares (its own app has no limiter). */
let t: TestApp

/** A rate-limit prefix of its own under `t.prefix` (so `t.close()` deletes its keys). */
const limiterPrefix = () => `${t.prefix}:rl-${randomBytes(3).toString('hex')}`

/** An app with the test quotas on its own prefix; `mode` unset runs RATE_LIMIT_MODE's default. */
async function appWith(
  options: {
    trustProxy?: boolean | string[]
    shared?: { prefix: string; quotas: typeof quotas }
    mode?: RateLimitMode
  } = {},
): Promise<FastifyInstance> {
  const { trustProxy = false, shared, mode } = options
  return secondInstance(t, {
    trustProxy,
    // failClosed answers 429 when Redis is slower than timeoutMs: roomy, so a loaded machine cannot fake a limit
    rateLimit: {
      prefix: shared?.prefix ?? limiterPrefix(),
      quotas: shared?.quotas ?? quotas,
      fallback: 'failClosed',
      timeoutMs: 10_000,
      ...(mode ? { mode } : {}),
    },
  })
}

beforeAll(async () => {
  t = await createTestApp('ratelimit')
})

afterAll(async () => {
  await t.close()
})

const policyOf = (limit: number): RateLimitPolicy => ({
  name: 'anonymous',
  algorithm: 'slidingWindow',
  limit,
  windowMs: 60_000,
  burst: limit,
})

const field = (value: string | string[] | number | undefined, param: string) =>
  Number(new RegExp(`;${param}=(\\d+)`).exec(String(value))?.[1])

describe('rate-limit plugin', () => {
  it('exact mode: puts the exact fields on allowed responses and answers 429 problem+json past the quota', async () => {
    const app = await appWith({ mode: 'exact' }) // r counts down by one: exact mode's headers
    const ip = '198.51.100.7'
    for (let i = 1; i <= 3; i++) {
      const res = await app.inject({ method: 'GET', url: CHEAP_READ, remoteAddress: ip })
      expect(res.statusCode).toBe(200)
      expect(res.headers['ratelimit-policy']).toBe('"anonymous";q=3;w=60')
      expect(res.headers.ratelimit).toMatch(/^"anonymous";r=\d+;t=\d+$/)
      expect(field(res.headers.ratelimit, 'r')).toBe(3 - i)
      expect(field(res.headers.ratelimit, 't')).toBeGreaterThan(0)
      expect(field(res.headers.ratelimit, 't')).toBeLessThanOrEqual(120) // two windows at most
      expect(res.headers['x-ratelimit-limit']).toBe('3')
      expect(res.headers['x-ratelimit-remaining']).toBe(String(3 - i))
      const reset = Number(res.headers['x-ratelimit-reset'])
      expect(Number.isInteger(reset)).toBe(true)
      expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000)) // Unix epoch seconds, not ms
      expect(reset).toBeLessThan(Date.now() / 1000 + 121)
      expect(res.headers['retry-after']).toBeUndefined()
    }
    const limited = await app.inject({ method: 'GET', url: CHEAP_READ, remoteAddress: ip })
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(limited.json()).toMatchObject({ status: 429, code: 'RATE_LIMITED' })
    const retryAfter = limited.headers['retry-after'] as string
    expect(retryAfter).toMatch(/^\d+$/)
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(field(limited.headers.ratelimit, 't'))
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
    expect(field(limited.headers.ratelimit, 'r')).toBe(0)
    expect(limited.headers['x-ratelimit-remaining']).toBe('0')
    // another client is not affected
    const other = await app.inject({ method: 'GET', url: CHEAP_READ, remoteAddress: '198.51.100.8' })
    expect(other.statusCode).toBe(200)
  })

  it('keys authenticated requests by user, not by IP', async () => {
    const app = await appWith()
    const ip = '203.0.113.50'
    const alice = await registerUser(app, `alice_${randomBytes(3).toString('hex')}`)
    const bob = await registerUser(app, `bob_${randomBytes(3).toString('hex')}`)
    const get = (auth: Record<string, string>) =>
      app.inject({ method: 'GET', url: CHEAP_READ, headers: auth, remoteAddress: ip })
    for (let i = 0; i < 5; i++) expect((await get(alice.auth)).statusCode).toBe(200)
    const limited = await get(alice.auth)
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['ratelimit-policy']).toBe('"user";q=5;w=60')
    expect((await get(bob.auth)).statusCode).toBe(200)
  })

  it('limits login and register per IP (brute force), whoever asks', async () => {
    const app = await appWith()
    const ip = '192.0.2.99'
    const login = (remoteAddress: string) =>
      app.inject({
        method: 'POST',
        url: '/auth/login',
        remoteAddress,
        payload: { username: 'nobody_here', password: 'wrong-password' },
      })
    for (let i = 0; i < 4; i++) expect((await login(ip)).statusCode).toBe(401)
    const limited = await login(ip)
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['ratelimit-policy']).toBe('"auth";q=4;w=60')
    expect((await login('192.0.2.100')).statusCode).toBe(401)
  })

  it('gives writes their own tighter quota and applies per-route quotas from config', async () => {
    const app = await appWith()
    const ip = '192.0.2.150'
    const post = () => app.inject({ method: 'POST', url: '/videos', remoteAddress: ip, payload: {} })
    expect((await post()).headers['ratelimit-policy']).toBe('"write";q=2;w=60')
    await post()
    expect((await post()).statusCode).toBe(429)
    const video = await app.inject({ method: 'GET', url: '/videos/1', remoteAddress: ip })
    expect(video.headers['ratelimit-policy']).toBe('"GET /videos/:id";q=1;w=10')
    expect((await app.inject({ method: 'GET', url: '/videos/1', remoteAddress: ip })).statusCode).toBe(429)
  })

  it('groups IPv6 clients by /64', async () => {
    const app = await appWith()
    const get = (remoteAddress: string) => app.inject({ method: 'GET', url: CHEAP_READ, remoteAddress })
    expect((await get('2001:db8:1:2::1')).statusCode).toBe(200)
    expect((await get('2001:db8:1:2:aaaa::2')).statusCode).toBe(200)
    expect((await get('2001:db8:1:2:ffff:ffff:ffff:ffff')).statusCode).toBe(200)
    expect((await get('2001:db8:1:2::9')).statusCode).toBe(429) // same /64
    expect((await get('2001:db8:1:3::1')).statusCode).toBe(200) // next /64
  })

  it('trusts X-Forwarded-For only when configured', async () => {
    const proxy = '10.0.0.1'
    const get = (app: FastifyInstance, forwardedFor: string) =>
      app.inject({
        method: 'GET',
        url: CHEAP_READ,
        remoteAddress: proxy,
        headers: { 'x-forwarded-for': forwardedFor },
      })
    const plain = await appWith({ trustProxy: false })
    for (let i = 0; i < 3; i++) await get(plain, `198.18.0.${i + 1}`)
    expect((await get(plain, '198.18.0.200')).statusCode).toBe(429) // all count as the proxy's address
    const behindProxy = await appWith({ trustProxy: [proxy] })
    for (let i = 0; i < 5; i++) expect((await get(behindProxy, `198.18.0.${i + 1}`)).statusCode).toBe(200)
  })
})

describe('rate-limit plugin, default mode (leased)', () => {
  it('two instances admit one quota between them, r never above what is left, slices given back on close', async () => {
    const prefix = limiterPrefix()
    const shared = { prefix, quotas: { ...quotas, anonymous: { limit: 20, windowMs: 60_000 } } }
    const a = await appWith({ shared })
    const b = await appWith({ shared })
    const ip = '198.51.100.77'
    let admitted = 0
    for (let i = 0; i < 30; i++) {
      const res = await (i % 2 === 0 ? a : b).inject({ method: 'GET', url: CHEAP_READ, remoteAddress: ip })
      if (res.statusCode === 200) admitted++
      else expect(res.statusCode).toBe(429)
      expect(field(res.headers.ratelimit, 'r')).toBeLessThanOrEqual(20 - admitted)
    }
    expect(admitted).toBe(20)
    // a third instance takes a slice (a quarter of 20 on a fresh client), closing gives its unused part back
    const c = await appWith({ shared })
    const other = '198.51.100.78'
    expect((await c.inject({ method: 'GET', url: CHEAP_READ, remoteAddress: other })).statusCode).toBe(200)
    const [even, odd] = rateLimitKeys(new KeySpace(prefix), { ...policyOf(20) }, addressKey(other))
    const held = async () => Number((await t.redis.get(even!)) ?? 0) + Number((await t.redis.get(odd!)) ?? 0)
    expect(await held()).toBe(5)
    await c.close()
    expect(await held()).toBe(1)
  })
})

describe('rate-limit plugin, answers from memory', () => {
  it('a refusal remembered in-process answers the same 429 as the one from Redis', async () => {
    const app = await appWith({ mode: 'leased' })
    const ip = '198.51.100.90'
    const get = () => app.inject({ method: 'GET', url: CHEAP_READ, remoteAddress: ip })
    // 3 admitted (slices of 1: a quarter of a quota of 3), then Redis refuses, then memory does
    for (let i = 0; i < 3; i++) expect((await get()).statusCode).toBe(200)
    const [fromRedis, fromMemory] = [await get(), await get()]
    for (const res of [fromRedis, fromMemory])
      expectRateLimited(res, 'anonymous', '"anonymous";q=3;w=60', CHEAP_READ)
    expect(Object.keys(fromMemory.headers).sort()).toEqual(Object.keys(fromRedis.headers).sort())
  })
})

describe('rate-limit plugin, on /metrics', () => {
  /** `floodgate_ratelimit_decisions_total{policy="anonymous"}` by `<source> <allowed>` (series at 0 left out). */
  async function anonymousDecisions(app: FastifyInstance): Promise<Record<string, number>> {
    const body = (await app.inject({ method: 'GET', url: '/metrics' })).body
    const counts: Record<string, number> = {}
    for (const m of body.matchAll(/^floodgate_ratelimit_decisions_total\{([^}]*)\} (\S+)$/gm)) {
      const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]))
      if (labels.policy === 'anonymous' && Number(m[2]) > 0)
        counts[`${labels.source} ${labels.allowed}`] = Number(m[2])
    }
    return counts
  }

  it('counts each decision by who decided and its answer: Redis, the blocked cache, the fallback', async () => {
    const app = await appWith({ mode: 'exact' })
    const get = () => app.inject({ method: 'GET', url: CHEAP_READ, remoteAddress: '198.51.100.61' })
    const statuses = []
    for (let i = 0; i < 5; i++) statuses.push((await get()).statusCode)
    expect(statuses).toEqual([200, 200, 200, 429, 429])
    expect(await anonymousDecisions(app)).toEqual({
      'redis true': 3,
      'redis false': 1,
      'blockedCache false': 1,
    })

    // an instance whose Redis is gone: the fallback answers, and says so
    const gone = createRedisClient(TEST_REDIS_URL)
    gone.on('error', () => {})
    gone.disconnect()
    const down = await secondInstance(t, {
      redis: gone,
      rateLimit: { prefix: limiterPrefix(), quotas, fallback: 'failOpen', timeoutMs: 50, mode: 'exact' },
    })
    expect(
      (await down.inject({ method: 'GET', url: CHEAP_READ, remoteAddress: '198.51.100.62' })).statusCode,
    ).toBe(200)
    expect(await anonymousDecisions(down)).toEqual({ 'failOpen true': 1 })
  })
})

describe('client keys and route quotas', () => {
  it('groups IPv6 by /64 and unwraps IPv4-mapped addresses', () => {
    expect(ipv6Groups('2001:db8::1')).toEqual(['2001', 'db8', '0', '0', '0', '0', '0', '1'])
    expect(ipv6Groups('::ffff:192.0.2.1').slice(6)).toEqual(['c000', '201'])
    expect(addressKey('2001:DB8:0:0:1::1')).toBe('ip6:2001:db8:0:0::/64')
    expect(addressKey('2001:db8::1%eth0')).toBe('ip6:2001:db8:0:0::/64')
    expect(addressKey('::ffff:192.0.2.1')).toBe('ip:192.0.2.1')
    expect(addressKey('192.0.2.1')).toBe('ip:192.0.2.1')
    expect(addressKey('::1')).toBe('ip6:0:0:0:0::/64')
  })

  it('keys IPv4, zone ids and IPv4-mapped forms as before, valid or not', () => {
    // the no-regex paths of addressKey: the text as is without ':' or '%', the mapped dotted quad
    const keys = {
      '0.0.0.0': 'ip:0.0.0.0',
      '256.1.1.1': 'ip:256.1.1.1',
      '1.2.3': 'ip:1.2.3',
      '': 'ip:',
      '192.0.2.1%eth0': 'ip:192.0.2.1',
      '::ffff:10.1.2.3': 'ip:10.1.2.3',
      '::FFFF:192.0.2.1': 'ip:192.0.2.1',
      '::ffff:300.1.2.3': 'ip:300.1.2.3',
      '::ffff:1.2.3.4%1': 'ip:1.2.3.4',
      '::ffff:1.2.3': 'ip:::ffff:1.2.3',
      '::ffff:102:304': 'ip6:0:0:0:0::/64',
    }
    for (const [ip, key] of Object.entries(keys)) expect(addressKey(ip), ip).toBe(key)
  })

  it('picks the limiter of a method and route once: per-route override, else the class', () => {
    const choose = routeLimiters(
      { auth: 'auth', write: 'write', user: 'user', anonymous: 'anonymous' },
      new Map([
        ['GET /videos/:id', 'video'],
        ['POST /auth/login', 'login'],
      ]),
    )
    const cases: [string, string | undefined, string, string, boolean][] = [
      // method, route, authenticated, anonymous, keyed by address
      ['GET', '/videos/:id', 'video', 'video', false],
      ['GET', '/feed', 'user', 'anonymous', false],
      ['DELETE', '/videos/:id', 'write', 'write', false],
      ['POST', '/auth/register', 'auth', 'auth', true],
      ['POST', '/auth/login', 'login', 'login', true],
      ['GET', undefined, 'user', 'anonymous', false],
    ]
    for (const [method, route, authenticated, anonymous, byAddress] of cases)
      expect(choose(method, route), `${method} ${route}`).toEqual({ authenticated, anonymous, byAddress })
    expect(choose('GET', '/feed')).toBe(choose('GET', '/feed'))
  })

  it('parses RATE_LIMIT_ROUTES and names a bad entry', () => {
    expect(parseRouteQuotas('POST /videos=20/60000, GET /feed/recommend=600/1000')).toEqual({
      'POST /videos': { limit: 20, windowMs: 60_000 },
      'GET /feed/recommend': { limit: 600, windowMs: 1000 },
    })
    expect(parseRouteQuotas('')).toEqual({})
    expect(() => parseRouteQuotas('POST /videos=0/60000')).toThrow(/POST \/videos=0\/60000/)
    expect(() => parseRouteQuotas('/videos=1/1')).toThrow(/expected/)
  })

  it('does not limit the probes and the metrics scrape', async () => {
    const app = await appWith()
    const ip = '198.51.100.77'
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      for (let i = 0; i < 5; i++) {
        const res = await app.inject({ method: i % 2 ? 'HEAD' : 'GET', url, remoteAddress: ip })
        expect(res.statusCode, `${url} #${i}: ${res.body}`).toBe(200)
        expect(res.headers['ratelimit-policy']).toBeUndefined()
      }
    }
    // the probes used none of the address's anonymous quota (3)
    for (let i = 0; i < 3; i++)
      expect((await app.inject({ method: 'GET', url: CHEAP_READ, remoteAddress: ip })).statusCode).toBe(200)
  })
})
