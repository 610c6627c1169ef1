import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'

/**
 * One log line per request instead of Fastify's two ('incoming request', then 'request completed'):
 * the completion line carries what both did — `req` (method, url, host, remoteAddress, remotePort),
 * `res.statusCode`, `responseTime` (ms) and `reqId` — at `info`, or at `error` as 'request errored'
 * when the response failed. Half the serialization and bytes per request on the read path.
 * A request still running has no line yet (REQUEST_TIMEOUT_MS bounds how long that lasts).
 */
export class OneLineRequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return
    if (error)
      reply.log.error(
        { req: request, res: reply, err: error, responseTime: reply.elapsedTime },
        'request errored',
      )
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
  }
}
