/**
 * The cost of video-api's request log line (one per request, at `info`): pino's generic
 * `logger.info({ reqId, req, res, responseTime }, 'request completed')` against the hand-written
 * line of src/log/request_line.ts (the same bytes), on one logger configured as the service's
 * (base fields, its `req`/`res` serializers), writing to /dev/null. Interleaved rounds in one process.
 *
 * usage: npm run bench:log [-- --lines 200000 --rounds 5]
 */
import { parseArgs } from 'node:util'
import type { FastifyReply, FastifyRequest } from 'fastify'
import pino from 'pino'
import { requestLineWriter, requestSerializers } from '../../apps/video-api/src/log/request_line.js'

const { values } = parseArgs({
  options: { lines: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '5' } },
})
const lines = Number(values.lines)
const logger = pino(
  {
    base: { service: 'video-api', version: '0.1.0', pid: process.pid, hostname: 'bench' },
    serializers: requestSerializers,
  },
  pino.destination({ dest: '/dev/null', sync: true }),
)
// the fields Fastify's request and reply give the line
const request = {
  method: 'GET',
  url: '/videos/13487',
  headers: { host: '127.0.0.1:3000' },
  host: '127.0.0.1:3000',
  ip: '127.0.0.1',
  socket: { remotePort: 41466 },
} as unknown as FastifyRequest
const reply = { statusCode: 200 } as FastifyReply
const reqId = '5d26410a-74fc-41e1-9a11-800dff18ac8d'
const write = requestLineWriter(logger, 'request completed')
if (!write) throw new Error('the bench logger is not one the hand-written line serves')

const variants = {
  pino: (i: number) =>
    logger.info({ reqId, req: request, res: reply, responseTime: 0.5 + i }, 'request completed'),
  handWritten: (i: number) => write(reqId, request, reply, 0.5 + i),
}
const samples: Record<keyof typeof variants, number[]> = { pino: [], handWritten: [] }
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, line] of Object.entries(variants) as [keyof typeof variants, (i: number) => void][]) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < lines; i++) line(i)
    samples[name].push(Number(process.hrtime.bigint() - start) / lines)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const result = {
  linesPerRound: lines,
  rounds: Number(values.rounds),
  nsPerLine: { pino: Math.round(median(samples.pino)), handWritten: Math.round(median(samples.handWritten)) },
  pinoOverHandWritten: Number((median(samples.pino) / median(samples.handWritten)).toFixed(2)),
}
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
