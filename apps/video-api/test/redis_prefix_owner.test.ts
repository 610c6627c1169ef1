import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { readInstallationId } from '../src/auth/installation.js'
import { createTestApp, TEST_JWT_SECRET, type TestApp } from './support/app.js'
import { createTestDatabase, type TestDatabase } from './support/database.js'

// A service pointed at a new (or reset) database keeps the Redis and REDIS_PREFIX of the old one:
// the old catalog's counts, likes and rankings would show on the new catalog's ids (both number
// videos from 1). The prefix is claimed by the first database's installation; another refuses to start.
let t: TestApp
let other: TestDatabase

beforeAll(async () => {
  t = await createTestApp('prefix-owner')
  other = await createTestDatabase('prefix-other')
})

afterAll(async () => {
  await other?.close()
  await t?.close()
})

const buildOn = (database: TestDatabase) =>
  buildApp({ db: database.db, redis: t.redis, redisPrefix: t.prefix, jwtSecret: TEST_JWT_SECRET })

describe('REDIS_PREFIX belongs to one installation', () => {
  it('is claimed by the first database, and its own instances start on it', async () => {
    expect(await t.redis.get(`${t.prefix}:meta:installation`)).toBe(await readInstallationId(t.database.db))
    const again = await t.restart()
    expect((await again.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
  })

  it("refuses another database's start with VIDEO_API_REDIS_PREFIX_OWNED, naming the prefix and the fix", async () => {
    const refused = await buildOn(other).then(
      async (app) => {
        await app.close()
        return undefined
      },
      (error: Error & { code?: string }) => error,
    )
    expect(refused?.code).toBe('VIDEO_API_REDIS_PREFIX_OWNED')
    expect(refused?.message).toContain(`REDIS_PREFIX '${t.prefix}'`)
    expect(refused?.message).toContain('Set another REDIS_PREFIX, or delete the old keys')
  })

  it('after a Redis data loss (the claim gone with the rest) the next database to start claims it', async () => {
    await t.redis.del(`${t.prefix}:meta:installation`)
    const app = await buildOn(other)
    await app.close()
    expect(await t.redis.get(`${t.prefix}:meta:installation`)).toBe(await readInstallationId(other.db))
  })
})
