import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { wideText } from './support/wide_text.js'

const script = fileURLToPath(new URL('./support/log_lines.ts', import.meta.url))

/** Runs support/log_lines.ts; the stdout chunks with the ms (since spawn) each arrived at. */
function run(flushMs: number, count: number, then: 'exit' | 'stay', killAfterMs?: number, wide = false) {
  const args = ['--import', 'tsx', script, String(flushMs), String(count), then, ...(wide ? ['wide'] : [])]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  const started = performance.now()
  const chunks: { ms: number; text: string }[] = []
  const bytes: Buffer[] = []
  child.stdout.on('data', (chunk: Buffer) => {
    bytes.push(chunk)
    chunks.push({ ms: performance.now() - started, text: chunk.toString() })
  })
  if (killAfterMs !== undefined) setTimeout(() => child.kill('SIGKILL'), killAfterMs)
  return new Promise<typeof chunks & { bytes: Buffer }>((resolve) =>
    child.once('close', () => resolve(Object.assign(chunks, { bytes: Buffer.concat(bytes) }))),
  )
}

const lines = (chunks: { text: string }[]) =>
  chunks
    .map((c) => c.text)
    .join('')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { i: number }).i)

describe('stdout log destination (LOG_FLUSH_MS)', () => {
  it('writes every buffered line when the process exits, in order', async () => {
    const chunks = await run(10_000, 500, 'exit')
    expect(lines(chunks)).toEqual(Array.from({ length: 500 }, (_, i) => i))
  }, 30_000)

  it('writes non-ASCII lines and lines longer than its buffer intact, in order', async () => {
    const out = await run(10_000, 300, 'exit', undefined, true)
    const parsed = out.bytes
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { i: number; text: string })
    expect(parsed.map((l) => l.i)).toEqual(Array.from({ length: 300 }, (_, i) => i))
    for (const line of parsed) expect(line.text).toBe(wideText(line.i))
  }, 30_000)

  it('holds a few lines at most flushMs, then writes them while the process runs', async () => {
    // up ~1-2 s to start tsx, then the lines: held for the 1,500 ms flush, written before the kill
    const chunks = await run(1_500, 3, 'stay', 8_000)
    expect(lines(chunks)).toEqual([0, 1, 2])
    expect(chunks).toHaveLength(1) // one write for the three lines
  }, 30_000)

  it('flushMs 0 writes each line at once (pino default)', async () => {
    const chunks = await run(0, 3, 'stay', 6_000)
    expect(lines(chunks)).toEqual([0, 1, 2])
  }, 30_000)
})
