import { TEST_DATABASE_URL } from '@floodgate/test-support'
import { describe, expect, it } from 'vitest'
import { spawnWorker } from '../support/processes.js'

describe('pgPoolDatabase when PostgreSQL sessions die', () => {
  it('never crashes the process: idle, in-transaction and mid-query connections terminated by the server', async () => {
    const worker = spawnWorker(new URL('./dead_session.worker.ts', import.meta.url), [TEST_DATABASE_URL])
    const code = await worker.exited
    const steps = Object.fromEntries(
      (worker.messages as { step: string }[]).map(({ step, ...rest }) => [step, rest]),
    )
    expect(steps).toMatchObject({
      idle: { replaced: true },
      transaction: { outcome: expect.stringMatching(/terminat|connection error/i) },
      query: { outcome: expect.stringMatching(/terminat/i) },
      done: { works: true },
    })
    expect(code).toBe(0)
  }, 30_000)
})
