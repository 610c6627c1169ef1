import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TokenService } from '../auth/tokens.js'
import { unauthorized } from './api_error.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Id of the authenticated user, when a valid bearer token came with the request. */
    userId: string | undefined
  }
}

/**
 * Reads `Authorization: Bearer <jwt>` on every request. No header: anonymous.
 * A header that is present but malformed, expired, tampered or signed with
 * another algorithm is refused with 401 even on public routes.
 */
export function registerAuth(app: FastifyInstance, tokens: TokenService): void {
  app.decorateRequest('userId', undefined)
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization
    if (header === undefined) return
    const match = /^Bearer ([A-Za-z0-9_.-]+)$/.exec(header)
    const userId = match ? tokens.verify(match[1]!) : undefined
    if (userId === undefined) throw unauthorized('bearer token is malformed, expired or invalid')
    request.userId = userId
  })
}

/** The authenticated user id. @throws {ApiError} `UNAUTHORIZED` when the request is anonymous. */
export function requireUser(request: FastifyRequest): string {
  if (request.userId === undefined) throw unauthorized()
  return request.userId
}
