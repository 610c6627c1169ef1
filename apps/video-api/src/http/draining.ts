import type { FastifyInstance } from 'fastify'
import { ApiError } from './api_error.js'

/**
 * While the app closes (SIGTERM drain), requests that still arrive on open
 * keep-alive connections get `503 UNAVAILABLE` as problem+json (Fastify's own
 * `return503OnClosing` answers plain JSON without a `code`, so the app turns it
 * off). Fastify sets `Connection: close` on these replies; requests already
 * running finish normally.
 */
export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onRequest', async (_request, reply) => {
    if (closing) {
      reply.header('retry-after', '1')
      throw new ApiError('UNAVAILABLE', 'the server is shutting down; retry on another instance')
    }
  })
}
