import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { classify, sendProblem } from './problem_handler.js'

/**
 * Fastify's `frameworkErrors`: errors raised while routing, before any hook
 * runs (`FST_ERR_BAD_URL` for a malformed %-escape such as `/videos/%zz`,
 * `FST_ERR_MAX_PARAM_LENGTH` for a path parameter over 100 characters).
 * Without it Fastify answers plain JSON with its own code; with it they are
 * problem+json like every other 4xx (400 or 414, code `VALIDATION_FAILED`).
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  void sendProblem(reply, request, classify(error))
}
