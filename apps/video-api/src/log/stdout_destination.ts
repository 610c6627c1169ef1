import pino from 'pino'

/** Bytes of log lines gathered before one write to stdout (LOG_FLUSH_MS > 0). */
export const LOG_BUFFER_BYTES = 16_384

/** SonicBoom in `contentMode: 'buffer'`, which takes Buffers (its types declare strings only). */
interface ByteSink {
  write(bytes: Buffer): boolean
  flushSync(): void
}

/**
 * Log lines encoded into one buffer as they come and handed to `sink` once at least `flushBytes`
 * bytes are in it. Each line is encoded once, into place: gathering strings and joining them
 * copied every line twice more (the join, then the write's UTF-8 encoding), and SonicBoom's own
 * `minLength` buffer measures the UTF-8 length of everything gathered on every line.
 */
class LineBuffer {
  // room for the threshold plus one more line of up to flushBytes / 3 characters
  private readonly capacity: number
  private chunk: Buffer
  private used = 0

  constructor(
    private readonly sink: ByteSink,
    private readonly flushBytes: number,
  ) {
    this.capacity = 2 * flushBytes
    this.chunk = Buffer.allocUnsafe(this.capacity)
  }

  write(line: string): void {
    // a UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, 2 units, is 4)
    if (line.length * 3 > this.capacity - this.used) {
      this.flush()
      if (line.length * 3 > this.capacity) {
        this.sink.write(Buffer.from(line))
        return
      }
    }
    this.used += this.chunk.write(line, this.used)
    if (this.used >= this.flushBytes) this.flush()
  }

  /** Hands what is gathered to the sink (a synchronous write). */
  flush(): void {
    if (this.used === 0) return
    const full = this.chunk.subarray(0, this.used)
    // a fresh buffer: the sink keeps `full` if the write was partial and it has to retry
    this.chunk = Buffer.allocUnsafe(this.capacity)
    this.used = 0
    this.sink.write(full)
  }

  flushSync(): void {
    this.flush()
    this.sink.flushSync()
  }
}

/**
 * The process's log destination: stdout through pino's SonicBoom, written synchronously (as
 * pino's default) but in batches of {@link LOG_BUFFER_BYTES} bytes, and at least every
 * `flushMs` ms, instead of one `write(2)` per line: with one request line per request, the
 * per-line system call cost more service CPU than the rest of a cached read's logging. Lines still
 * buffered are written when the process exits (`exit` also runs after an uncaught exception or
 * `process.exit`); only a SIGKILL or a crash of Node itself loses them (at most `flushMs` ms).
 * `flushMs` 0: every line is written at once, pino's default.
 */
export function stdoutDestination(flushMs: number): pino.DestinationStream {
  if (flushMs === 0) return pino.destination({ dest: 1, sync: true })
  const stdout = pino.destination({ dest: 1, sync: true, contentMode: 'buffer' }) as unknown as ByteSink
  const buffer = new LineBuffer(stdout, LOG_BUFFER_BYTES)
  setInterval(() => buffer.flush(), flushMs).unref()
  process.once('exit', () => buffer.flushSync())
  return buffer
}
