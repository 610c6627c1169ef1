import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { kyselySqlDatabase } from '../src/interactions/sql_database.js'
import { createTestApp, createVideo, registerUser, type TestApp } from './support/app.js'
import { dbQueries } from './support/metrics_text.js'

describe('db_queries_total', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp('dbqueries')
  })
  afterAll(async () => {
    await t.close()
  })

  it('counts the statements the app runs: one per uncached video read, none for a route without SQL', async () => {
    const user = await registerUser(t.app, 'dbq_owner')
    const video = await createVideo(t.app, user.auth)
    const before = await dbQueries(t.app)
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ method: 'GET', url: `/videos/${video.id}` })
      expect(res.statusCode).toBe(200)
    }
    const afterReads = await dbQueries(t.app)
    // No cache in test apps: each read is at least one statement.
    expect(afterReads - before).toBeGreaterThanOrEqual(3)
    await t.app.inject({ method: 'GET', url: '/healthz' })
    expect(await dbQueries(t.app)).toBe(afterReads)
  })

  it('counts raw statements too (floodgate SqlExecutor: the counts fallback, the flush)', async () => {
    const sql = kyselySqlDatabase(t.app.db)
    const before = await dbQueries(t.app)
    await sql.query('SELECT 1')
    await sql.transaction(async (trx) => {
      await trx.query('SELECT 1')
      await trx.query('SELECT 2')
    })
    expect((await dbQueries(t.app)) - before).toBe(3)
  })
})
