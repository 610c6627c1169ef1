import pino from 'pino'

/** Bytes of log lines gathered before one write to stdout (LOG_FLUSH_MS > 0). */
export const LOG_BUFFER_BYTES = 4096

/**
 * The process's log destination: stdout through pino's SonicBoom, written synchronously (as
 * pino's default) but in batches of {@link LOG_BUFFER_BYTES} bytes, and at least every `flushMs`
 * ms, instead of one `write(2)` per line: with one request line per request, the per-line
 * system call cost more service CPU than the rest of a cached read's logging. Lines still
 * buffered are written when the process exits (`exit` also runs after an uncaught exception or
 * `process.exit`); only a SIGKILL or a crash of Node itself loses them (at most `flushMs` ms).
 * `flushMs` 0: every line is written at once, pino's default.
 */
export function stdoutDestination(flushMs: number): pino.DestinationStream {
  if (flushMs === 0) return pino.destination({ dest: 1, sync: true })
  const destination = pino.destination({
    dest: 1,
    sync: true,
    minLength: LOG_BUFFER_BYTES,
    periodicFlush: flushMs,
  })
  process.once('exit', () => destination.flushSync())
  return destination
}
