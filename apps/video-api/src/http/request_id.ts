import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/** The header a caller (or a proxy) sets to correlate its request with our logs. */
export const REQUEST_ID_HEADER = 'x-request-id'

// What an incoming id may look like: a UUID, a trace id, a proxy's token. Anything else (too long,
// spaces, control characters that could forge log lines) is replaced by a fresh UUID.
const ACCEPTED = /^[A-Za-z0-9._:@/+=-]{1,128}$/

/** Fastify `genReqId`: the caller's `x-request-id` when it is a plausible id, else a random UUID. */
export function requestId(request: IncomingMessage): string {
  const header = request.headers[REQUEST_ID_HEADER]
  return typeof header === 'string' && ACCEPTED.test(header) ? header : randomUUID()
}

/**
 * Echoes the request id (`request.id`, logged as `reqId`) in `x-request-id` on every answer, errors
 * included. Set when the request arrives, by the first `onRequest` hook (call this before any other
 * hook is added, so their errors carry it too): an `onSend` hook would make Fastify run a whole
 * onSend stage on every reply only for this. Answers given before any hook runs (routing errors) get
 * it from {@link setRequestIdHeader} in `frameworkErrors`.
 */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    setRequestIdHeader(request, reply)
    done()
  })
}

/** Puts `request.id` in the `x-request-id` header of `reply`. */
export function setRequestIdHeader(request: FastifyRequest, reply: FastifyReply): void {
  reply.header(REQUEST_ID_HEADER, request.id)
}
