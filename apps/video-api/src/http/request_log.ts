import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'
import { DeferredChildLogger } from '../log/deferred_child.js'
import { type RequestLineWriter, requestLineWriter } from '../log/request_line.js'

const COMPLETED = 'request completed'
const ERRORED = 'request errored'

/**
 * One log line per request instead of Fastify's two ('incoming request', then 'request completed'):
 * the completion line carries what both did — `req` (method, url, host, remoteAddress, remotePort),
 * `res.statusCode`, `responseTime` (ms) and `reqId` — at `info`, or at `error` as 'request errored'
 * when the response failed. Half the serialization and bytes per request on the read path.
 * A request still running has no line yet (REQUEST_TIMEOUT_MS bounds how long that lasts).
 * The completion line of a plain logger is written by hand (src/log/request_line.ts), same bytes.
 */
export class OneLineRequestLog extends LogController {
  /** Per parent logger (one per app), its hand-written line, or null when pino must write it. */
  private readonly writers = new WeakMap<object, RequestLineWriter | null>()

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return
    const log = reply.log
    // no child built for this request (src/log/deferred_child.ts): the same line through the parent,
    // the child's one binding (reqId, as object literals cost less than copies) written first
    const parent =
      this.requestIdLogLabel === 'reqId' && log instanceof DeferredChildLogger
        ? log.parentWhileUnused()
        : undefined
    const responseTime = reply.elapsedTime
    if (error) {
      if (parent)
        parent.error({ reqId: request.id, req: request, res: reply, err: error, responseTime }, ERRORED)
      else log.error({ req: request, res: reply, err: error, responseTime }, ERRORED)
    } else if (parent) {
      let write = this.writers.get(parent)
      if (write === undefined) {
        write = requestLineWriter(parent, COMPLETED) ?? null
        this.writers.set(parent, write)
      }
      if (write) write(request.id, request, reply, responseTime)
      else parent.info({ reqId: request.id, req: request, res: reply, responseTime }, COMPLETED)
    } else log.info({ req: request, res: reply, responseTime }, COMPLETED)
  }
}
