import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import pino from 'pino'

/**
 * Fastify's `req` and `res` log serializers (fastify/lib/logger-pino.js, from pino-http), the
 * same output, as our own functions: {@link requestLineWriter} writes the request line by hand
 * only while these are the ones in use.
 */
export const requestSerializers = {
  req(request: FastifyRequest) {
    return {
      method: request.method,
      url: request.url,
      // Node joins a repeated header other than set-cookie into one string
      version: request.headers?.['accept-version'] as string | undefined,
      host: request.host,
      remoteAddress: request.ip,
      remotePort: request.socket ? request.socket.remotePort : undefined,
    }
  },
  res(reply: { statusCode: number }) {
    return { statusCode: reply.statusCode }
  },
}

/** Writes one request line: `reqId`, `req`, `res`, `responseTime` (ms), then the message. */
export type RequestLineWriter = (
  reqId: string,
  request: FastifyRequest,
  reply: FastifyReply,
  responseTimeMs: number,
) => void

const S = pino.symbols
/** Not in pino's type declarations (pino ≥ 8.14 has it). */
const MSG_PREFIX = (pino.symbols as unknown as Record<string, symbol>).msgPrefixSym!
/** pino's mark on a stream that wants each line's level and object (multistream): lines go through pino. */
const NEEDS_METADATA = Symbol.for('pino.metadata')
/** Characters `JSON.stringify` escapes in a string: `"`, `\`, controls, lone surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching the control characters is the point
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

/**
 * The `info` request line of `logger` written without pino's generic serialization (per field a
 * serializer lookup, `JSON.stringify` of `req` and `res`): the same bytes pino writes for
 * `logger.info({ reqId, req, res, responseTime }, message)` at about half its cost
 * (`npm run bench:log`; docs/benchmarks.md, "the request line"). `undefined` when the logger does
 * anything this line would not: other `req`/`res` serializers, a mixin, a log formatter, hooks,
 * redaction, a nested key, a message prefix, only custom levels or a multistream; pino then
 * writes the line.
 * `apps/video-api/test/request_log.test.ts` holds the bytes equal to pino's.
 */
export function requestLineWriter(logger: FastifyBaseLogger, message: string): RequestLineWriter | undefined {
  const l = logger as unknown as Record<symbol, unknown> & { isLevelEnabled(level: string): boolean }
  const serializers = l[S.serializersSym] as Record<string, unknown> | undefined
  const formatters = l[S.formattersSym] as { log?: unknown } | undefined
  const hooks = l[S.hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined
  const stringifiers = l[S.stringifiersSym] as Record<string | symbol, unknown> | undefined
  const stream = l[S.streamSym] as (pino.DestinationStream & Record<symbol, unknown>) | undefined
  const plain =
    serializers?.req === requestSerializers.req &&
    serializers?.res === requestSerializers.res &&
    typeof l.isLevelEnabled === 'function' &&
    !l[S.mixinSym] &&
    !formatters?.log &&
    !hooks?.logMethod &&
    !hooks?.streamWrite &&
    (stringifiers === undefined ||
      (Object.keys(stringifiers).length === 0 && !stringifiers[S.wildcardFirstSym])) &&
    !l[S.nestedKeySym] &&
    !l[MSG_PREFIX] &&
    !l[S.useOnlyCustomLevelsSym] &&
    stream !== undefined &&
    stream[NEEDS_METADATA] !== true
  if (!plain) return undefined
  const messageField = `,${text(l[S.messageKeySym] as string)}:${text(message)}`
  return (reqId, request, reply, responseTimeMs) => {
    if (!l.isLevelEnabled('info')) return
    const levelTime = (l[S.lsCacheSym] as Record<number, string>)[30]! + (l[S.timeSym] as () => string)()
    const version = request.headers?.['accept-version']
    const host = request.host
    const address = request.ip
    const port = request.socket ? request.socket.remotePort : undefined
    stream.write(
      `${levelTime}${l[S.chindingsSym] as string},"reqId":${text(reqId)},"req":{"method":${text(request.method)},"url":${text(request.url)}${
        version === undefined ? '' : `,"version":${value(version)}`
      }${host === undefined ? '' : `,"host":${value(host)}`}${
        address === undefined ? '' : `,"remoteAddress":${value(address)}`
      }${port === undefined ? '' : `,"remotePort":${value(port)}`}},"res":{"statusCode":${value(reply.statusCode)}},"responseTime":${
        Number.isFinite(responseTimeMs) ? responseTimeMs : null
      }${messageField}${l[S.endSym] as string}`,
    )
  }
}

/** A string as JSON text. */
function text(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`
}

/** A field of `req`/`res` as `JSON.stringify` writes it inside an object (defined values only). */
function value(v: unknown): string {
  if (typeof v === 'string') return text(v)
  if (typeof v === 'number') return Number.isFinite(v) ? `${v}` : 'null'
  return JSON.stringify(v)
}
