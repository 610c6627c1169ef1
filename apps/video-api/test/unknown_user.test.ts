import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { InteractionKeys, interactionLayout } from 'floodgate'
import type { Cluster, Redis } from 'ioredis'
import { sql } from 'kysely'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startInteractionFlush } from '../src/interactions/flush.js'
import { videoInteractionTables } from '../src/interactions/tables.js'
import { createTestApp, createVideo, registerUser, type TestApp } from './support/app.js'

let t: TestApp
let app: FastifyInstance
let redis: Redis | Cluster
let prefix: string
const UNKNOWN = '987654321'

beforeAll(async () => {
  // no flush consumer here: the second test starts its own, after the events are in the stream
  t = await createTestApp('unknown', { interactions: { partitions: 1 } })
  ;({ app, redis, prefix } = t)
})

afterAll(() => t.close())

describe('a validly signed token of a user the database does not have', () => {
  it('is refused with 401 on writes (no event reaches the stream)', async () => {
    const alice = await registerUser(app, `alice_${randomBytes(3).toString('hex')}`)
    const video = (await createVideo(app, alice.auth)).id
    const ghost = { authorization: `Bearer ${app.tokens.issue(UNKNOWN)}` }
    for (const [method, url] of [
      ['PUT', `/videos/${video}/like`],
      ['PUT', `/videos/${video}/favorite`],
      ['POST', '/videos'],
    ] as const) {
      const res = await app.inject({
        method,
        url,
        headers: ghost,
        payload: method === 'POST' ? {} : undefined,
      })
      expect(res.statusCode).toBe(401)
      expect(res.json<{ code: string }>().code).toBe('UNAUTHORIZED')
    }
    const keys = new InteractionKeys(prefix, 1)
    expect(await redis.xlen(keys.stream(0))).toBe(0)
    // a real user still writes
    const ok = await app.inject({ method: 'PUT', url: `/videos/${video}/like`, headers: alice.auth })
    expect(ok.statusCode).toBe(200)
  })

  it('an event that violates a foreign key is dead-lettered after maxDeliveries; the rest of its batch applies', async () => {
    const bob = await registerUser(app, `bob_${randomBytes(3).toString('hex')}`)
    const video = (await createVideo(app, bob.auth)).id
    const keys = new InteractionKeys(prefix, 1)
    const before = await redis.xlen(keys.stream(0))
    // what a write with an unknown user used to leave in the stream, between two good events
    await app.interactions.setFavorited(video, bob.userId, true)
    await app.interactions.setLiked(video, UNKNOWN, true)
    await app.interactions.setLiked(video, bob.userId, true)
    expect(await redis.xlen(keys.stream(0))).toBe(before + 3)

    const dead: string[] = []
    const { flush, legacyDrain } = startInteractionFlush({
      redis,
      db: t.database.db,
      layout: interactionLayout({ prefix, partitions: 1, tables: videoInteractionTables }),
      registry: new Registry(),
      log: app.log,
      settings: { blockMs: 50, claimIdleMs: 100, maxDeliveries: 3, batchSize: 100 },
    })
    try {
      const deadline = Date.now() + 20_000
      while (Date.now() < deadline) {
        if ((await redis.xlen(keys.dead(0))) > 0 && (await flush.maintain()).pending === 0) break
        await sleep(100)
      }
      for (const [, fields] of await redis.xrange(keys.dead(0), '-', '+')) dead.push(fields.join(' '))
      expect(dead).toHaveLength(1)
      expect(dead[0]).toContain(UNKNOWN)
      expect(dead[0]).toContain('23503')
      expect((await flush.maintain()).pending).toBe(0)
      const { rows } = await sql<{ likes: number; favorites: number; like_rows: number }>`
        select like_count::int as likes, favorite_count::int as favorites,
          (select count(*)::int from video_likes where video_id = ${video}) as like_rows
        from videos where id = ${video}`.execute(t.database.db)
      expect(rows[0]).toEqual({ likes: 1, favorites: 1, like_rows: 1 })
    } finally {
      await legacyDrain.stop()
      await flush.stop()
    }
  })
})
