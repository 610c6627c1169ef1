import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { Type } from 'typebox'
import { ProblemRef } from '../http/schemas.js'

const Check = Type.Object({ status: Type.String(), db: Type.String(), redis: Type.String() })

async function probe(check: () => Promise<unknown>, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs)
      }),
    ])
    return 'ok'
  } catch (error) {
    return `down: ${(error as Error).message}`
  } finally {
    clearTimeout(timer)
  }
}

/**
 * `GET /healthz` (process up) and `GET /readyz` (DB and Redis answer within 1 s each). Both ignore
 * `Authorization` (a malformed or expired token is not a reason to take the instance out).
 */
export function healthRoutes(app: FastifyInstance): void {
  const config = { ignoresAuthorization: true }
  app.get(
    '/healthz',
    { config, schema: { response: { 200: Type.Object({ status: Type.String() }) } } },
    async () => ({
      status: 'ok',
    }),
  )
  // 503 has two bodies: the check's (not ready) and the problem of an instance shutting down
  // (src/http/draining.ts); with Check alone, serializing that problem failed and answered 500.
  const notReady = {
    content: { 'application/json': { schema: Check }, 'application/problem+json': { schema: ProblemRef } },
  }
  app.get(
    '/readyz',
    { config, schema: { response: { 200: Check, 503: notReady } } },
    async (_request, reply) => {
      const [db, redis] = await Promise.all([
        probe(() => sql`select 1`.execute(app.db), 1000),
        probe(() => app.redis.ping(), 1000),
      ])
      const ok = db === 'ok' && redis === 'ok'
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not ready', db, redis })
    },
  )
}
