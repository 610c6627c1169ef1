import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { ProblemCode } from './api_error.js'
import { classify, sendProblem } from './problem_handler.js'
import { setRequestIdHeader } from './request_id.js'

/**
 * Fastify's `frameworkErrors`: errors raised while routing, before any hook
 * runs (`FST_ERR_BAD_URL` for a malformed %-escape such as `/videos/%zz`).
 * Without it Fastify answers plain JSON with its own code; with it they are
 * problem+json like every other 4xx (400 `VALIDATION_FAILED`), with `x-request-id`
 * (no hook sets it on these). No path parameter is refused for its length here: app.ts sets
 * `maxParamLength` to Node's header limit, so an over-long id reaches its route's schema.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  setRequestIdHeader(request, reply)
  void sendProblem(reply, request, classify(error))
}

const clientErrors: Record<string, { status: 400 | 408 | 431; code: ProblemCode; detail: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'HEADERS_TOO_LARGE',
    detail: 'request headers are larger than the limit',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'REQUEST_TIMEOUT',
    detail: 'the request was not received within REQUEST_TIMEOUT_MS',
  },
}
const malformed = { status: 400, code: 'VALIDATION_FAILED', detail: 'malformed HTTP request' } as const

/**
 * Fastify's `clientErrorHandler`: errors Node's HTTP parser raises on the socket
 * before there is a request (headers over the limit, a request not received in
 * time, malformed HTTP). Same statuses as Fastify's default (431, 408, 400), but
 * as problem+json with a stable `code`; the connection is then closed.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const { status, code, detail } = clientErrors[error.code ?? ''] ?? malformed
  const body = JSON.stringify({
    type: `urn:video-api:problem:${code.toLowerCase()}`,
    title: code.replaceAll('_', ' ').toLowerCase(),
    status,
    code,
    detail,
  })
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(error)
}
