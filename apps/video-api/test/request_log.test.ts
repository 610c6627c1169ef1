import { Writable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeferredChildLogger } from '../src/log/deferred_child.js'
import { requestLineWriter, requestSerializers } from '../src/log/request_line.js'
import { SERVICE } from '../src/service_info.js'
import { createTestApp, type TestApp } from './support/app.js'

/** A stream that keeps each line as written. */
function lineSink() {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean))
      done()
    },
  })
  return { lines, stream }
}

// The fields that change from run to run, replaced by a placeholder; everything else compared byte for byte.
const normalise = (line: string) =>
  line
    .replace(/"time":\d+/, '"time":T')
    .replace(/"pid":\d+/, '"pid":P')
    .replace(/"hostname":"[^"]*"/, '"hostname":"H"')
    .replace(/"responseTime":[\d.e-]+/, '"responseTime":R')

const { lines, stream } = lineSink()
let t: TestApp

beforeAll(async () => {
  t = await createTestApp('requestlog', { logger: { level: 'info', stream } })
})
afterAll(() => t.close())

describe('request log line', () => {
  it('is one line per request with the same keys, order and values', async () => {
    const head = `{"level":30,"time":T,"service":"video-api","version":"${SERVICE.version}","pid":P,"hostname":"H"`
    const cases = [
      {
        request: { method: 'GET' as const, url: '/healthz', headers: { 'x-request-id': 'line-1' } },
        line: `${head},"reqId":"line-1","req":{"method":"GET","url":"/healthz","host":"localhost:80","remoteAddress":"127.0.0.1"},"res":{"statusCode":200},"responseTime":R,"msg":"request completed"}`,
      },
      {
        request: {
          method: 'GET' as const,
          url: '/nope?x=1',
          headers: { 'x-request-id': 'line-2', 'accept-version': '2', host: 'api.example' },
        },
        line: `${head},"reqId":"line-2","req":{"method":"GET","url":"/nope?x=1","version":"2","host":"api.example","remoteAddress":"127.0.0.1"},"res":{"statusCode":404},"responseTime":R,"msg":"request completed"}`,
      },
    ]
    for (const { request, line } of cases) {
      lines.length = 0
      await t.app.inject(request)
      expect(lines.map(normalise)).toEqual([line])
    }
  })
})

describe('DeferredChildLogger', () => {
  const make = () => {
    const sink = lineSink()
    const parent = pino({ base: { service: 's' }, timestamp: false }, sink.stream)
    return { parent, lines: sink.lines }
  }
  const fields = { req: { method: 'GET' }, responseTime: 1.5 }

  it('lets the request line go through the parent, the same line as through a pino child', async () => {
    const plain = make()
    plain.parent.child({ reqId: 'r1' }).info(fields, 'request completed')
    const deferred = make()
    const log = new DeferredChildLogger(deferred.parent, { reqId: 'r1' })
    log.parentWhileUnused()?.info({ reqId: 'r1', ...fields }, 'request completed')
    await new Promise((resolve) => setImmediate(resolve))
    expect(deferred.lines).toEqual(plain.lines)
    expect(deferred.lines[0]).toBe(
      '{"level":30,"service":"s","reqId":"r1","req":{"method":"GET"},"responseTime":1.5,"msg":"request completed"}',
    )
  })

  it('logs during the request through a child built on first use, then the request line through it', async () => {
    const plain = make()
    const child = plain.parent.child({ reqId: 'r2' })
    child.warn({ videoId: '7' }, 'restoring failed')
    child.child({ part: 'x' }).error('inner')
    child.error(fields, 'request errored')
    const deferred = make()
    const log = new DeferredChildLogger(deferred.parent, { reqId: 'r2' })
    log.warn({ videoId: '7' }, 'restoring failed')
    log.child({ part: 'x' }).error('inner')
    expect(log.parentWhileUnused()).toBeUndefined()
    log.error(fields, 'request errored')
    await new Promise((resolve) => setImmediate(resolve))
    expect(deferred.lines).toEqual(plain.lines)
    expect(deferred.lines).toHaveLength(3)
    expect(log.level).toBe('info')
  })
})

describe('the hand-written request line', () => {
  const make = (options: pino.LoggerOptions = {}) => {
    const sink = lineSink()
    const logger = pino(
      {
        base: { service: 's', pid: 1 },
        serializers: requestSerializers,
        timestamp: () => ',"time":7',
        ...options,
      },
      sink.stream,
    )
    return { logger, lines: sink.lines }
  }
  // what Fastify gives the serializers: only the fields they read
  const request = (fields: Record<string, unknown>) =>
    ({
      method: 'GET',
      url: '/videos/1',
      headers: {},
      host: 'h',
      ip: '127.0.0.1',
      ...fields,
    }) as unknown as FastifyRequest
  const reply = (statusCode: number) => ({ statusCode }) as FastifyReply
  const cases: [string, FastifyRequest, FastifyReply, number][] = [
    ['r-1', request({ socket: { remotePort: 41466 } }), reply(200), 0.123],
    [
      'r-2',
      request({ url: '/a"b\\c\u0001d\u00e9?q=%22', headers: { 'accept-version': '2' } }),
      reply(404),
      12,
    ],
    ['r-3', request({ host: undefined, ip: '::1', socket: {} }), reply(500), Number.NaN],
    ['r "4"', request({ method: 'DELETE', headers: { 'accept-version': 'x\ny' } }), reply(204), 1e21],
  ]

  it("writes pino's bytes, field for field", async () => {
    const byPino = make()
    const byHand = make()
    const write = requestLineWriter(byHand.logger, 'request completed')
    expect(write).toBeTypeOf('function')
    for (const [reqId, req, res, responseTime] of cases) {
      byPino.logger.info({ reqId, req, res, responseTime }, 'request completed')
      write!(reqId, req, res, responseTime)
    }
    await new Promise((resolve) => setImmediate(resolve))
    expect(byHand.lines).toEqual(byPino.lines)
    expect(byHand.lines[1]).toBe(
      '{"level":30,"time":7,"service":"s","pid":1,"reqId":"r-2","req":{"method":"GET","url":"/a\\"b\\\\c\\u0001d\u00e9?q=%22","version":"2","host":"h","remoteAddress":"127.0.0.1"},"res":{"statusCode":404},"responseTime":12,"msg":"request completed"}',
    )
  })

  it('writes nothing below info', async () => {
    const { logger, lines } = make({ level: 'warn' })
    requestLineWriter(logger, 'request completed')!(...cases[0]!)
    await new Promise((resolve) => setImmediate(resolve))
    expect(lines).toEqual([])
  })

  it('leaves the line to pino when the logger does more than the hand-written line would', () => {
    const notPlain: [string, pino.LoggerOptions][] = [
      ['other serializers', { serializers: { req: (r: unknown) => r } }],
      ['a mixin', { mixin: () => ({ extra: 1 }) }],
      ['a log formatter', { formatters: { log: (o: Record<string, unknown>) => o } }],
      [
        'a logMethod hook',
        { hooks: { logMethod: (args, method) => method.apply(undefined as never, args) } },
      ],
      ['redaction', { redact: ['req.url'] }],
      ['a nested key', { nestedKey: 'payload' }],
      ['a message prefix', { msgPrefix: '[api] ' }],
      [
        'only custom levels',
        { customLevels: { info: 30, loud: 35 }, useOnlyCustomLevels: true, level: 'info' },
      ],
    ]
    for (const [what, options] of notPlain)
      expect({ what, writer: requestLineWriter(make(options).logger, 'm') }).toEqual({
        what,
        writer: undefined,
      })
  })
})
