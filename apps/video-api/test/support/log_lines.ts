// Writes `count` log lines through the service's stdout destination, then exits with
// process.exit(0) (`exit`) or stays up until killed (`stay`).
// argv: <flushMs> <count> <exit|stay> [wide]: `wide` logs support/wide_text.ts's non-ASCII text,
// some lines longer than the destination's buffer.
import pino from 'pino'
import { stdoutDestination } from '../../src/log/stdout_destination.js'
import { wideText } from './wide_text.js'

const [flushMs = '100', count = '1', then = 'exit', wide] = process.argv.slice(2)
const log = pino({ base: null }, stdoutDestination(Number(flushMs)))
for (let i = 0; i < Number(count); i++) {
  if (wide === 'wide') log.info({ i, text: wideText(i) }, 'request completed')
  else log.info({ i }, 'request completed')
}
if (then === 'exit') process.exit(0)
else setInterval(() => undefined, 1_000)
