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
  // a callback hook: an async one costs a promise, a microtask and Fastify's handleResolve per request
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done()
    reply.header('retry-after', '1')
    done(new ApiError('UNAVAILABLE', 'the server is shutting down; retry on another instance'))
  })
}
