// KnownUsers' policy (src/auth/known_users.ts) on the real UserRepository, whose pool reaches the
// shared PostgreSQL through a proxy the test breaks (support/pg_proxy.ts): confirmed users cost
// no query within the window; while PostgreSQL cannot be reached every user is `unverified` (the
// token stands), whether confirmed long ago, never seen, or missing; one probe per
// `probeEveryMs`, not one query per write; other database errors are thrown. Server only.
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KnownUsers } from '../src/auth/known_users.js'
import { openPostgres } from '../src/db/connect.js'
import { UserRepository } from '../src/users/repository.js'
import { createTestDatabase, type TestDatabase, testDbKind } from './support/database.js'
import { PgProxy } from './support/pg_proxy.js'

const skip = testDbKind === 'pglite'
// wide enough that a stalled event loop on a loaded box does not cross them between two checks
const TTL_MS = 1_000
const PROBE_EVERY_MS = 2_000
let database: TestDatabase | undefined
let proxy: PgProxy | undefined
let proxied: Awaited<ReturnType<typeof openPostgres>> | undefined
let userId = ''

beforeAll(async () => {
  if (skip) return
  database = await createTestDatabase('knownusers')
  const created = await new UserRepository(database.db).create('known_user', 'not-a-real-hash')
  userId = created!.id
  proxy = await PgProxy.start()
  proxied = await openPostgres({ url: proxy.url(), schema: database.schema, poolMax: 2 })
})

afterAll(async () => {
  await proxy?.close()
  await proxied?.close()
  await database?.close()
})

describe.skipIf(skip)('KnownUsers while PostgreSQL comes and goes', () => {
  it('confirms, refuses, trusts the token while unreachable, probes once per interval, and recovers', async () => {
    const users = new UserRepository(proxied!.db)
    let lookups = 0
    const unverified: unknown[] = []
    const known = new KnownUsers(
      (id) => {
        lookups++
        return users.exists(id)
      },
      { ttlMs: TTL_MS, probeEveryMs: PROBE_EVERY_MS, onUnverified: (error) => unverified.push(error) },
    )
    const missing = String(Number(userId) + 1000)

    expect(await known.check(userId)).toBe('exists')
    expect(await known.check(userId)).toBe('exists')
    expect(lookups, 'a confirmed user costs no query within the window').toBe(1)
    expect(await known.check(missing)).toBe('missing')
    expect(await known.check(missing)).toBe('missing')
    expect(lookups, 'an unknown id is asked every time').toBe(3)

    await sleep(TTL_MS + 50) // the confirmation expires
    await proxy!.break()
    try {
      expect(await known.check(userId)).toBe('unverified')
      expect(lookups).toBe(4)
      // within the interval: no lookup at all, for anyone
      for (const id of [userId, missing, '123456789']) expect(await known.check(id)).toBe('unverified')
      expect(lookups).toBe(4)
      expect(unverified).toHaveLength(4)
      // the pool's idle connection was reset (ECONNRESET), or a new one refused (ECONNREFUSED)
      expect((unverified[0] as { code?: string }).code).toMatch(/^ECONNRE(SET|FUSED)$/)
      // past the interval: one probe, still down
      await sleep(PROBE_EVERY_MS + 50)
      const probes = await Promise.all([known.check(userId), known.check(missing), known.check(userId)])
      expect(probes).toEqual(['unverified', 'unverified', 'unverified'])
      expect(lookups, 'one probe, the others skip the database').toBe(5)
    } finally {
      await proxy!.restore()
    }
    // back: the next probe closes the breaker and answers from the database again
    await sleep(PROBE_EVERY_MS + 50)
    expect(await known.check(missing)).toBe('missing')
    expect(await known.check(userId)).toBe('exists')
    expect(lookups).toBe(7)
  })

  it('throws a database error that is not an outage', async () => {
    const known = new KnownUsers(async () => {
      await proxied!.db
        .selectFrom('no_such_table' as 'users')
        .select('id')
        .execute()
      return true
    })
    await expect(known.check('1')).rejects.toMatchObject({ code: '42P01' })
  })
})
