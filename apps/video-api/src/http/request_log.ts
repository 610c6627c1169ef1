import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'
import { DeferredChildLogger } from '../log/deferred_child.js'

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
    const fields = error
      ? { req: request, res: reply, err: error, responseTime: reply.elapsedTime }
      : { req: request, res: reply, responseTime: reply.elapsedTime }
    const message = error ? 'request errored' : 'request completed'
    const log = reply.log
    // DeferredChildLogger: the same line without building a pino child for it
    if (log instanceof DeferredChildLogger) log.write(error ? 'error' : 'info', fields, message)
    else if (error) log.error(fields, message)
    else log.info(fields, message)
  }
}
