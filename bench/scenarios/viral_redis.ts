import { readdirSync } from 'node:fs'
import { LuaScript } from 'floodgate'
import type { Redis } from 'ioredis'

/** How often the tap drains the SLOWLOG (ms): well under what slowlog-max-len holds at the storm's rate. */
const DRAIN_EVERY_MS = 250
/** SLOWLOG entries kept between drains. */
const MAX_LEN = 1_000_000
/** The bench's own commands on the server (not the service's): left out of every figure. */
const OWN = /^(slowlog|multi|exec|config|info|memory|scan|latency|sscan|get|mget)$/

type Entry = [number, number, number, string[], ...unknown[]]

/** Every script of the library (the files of its `lua` folders, includes left out), by file name. */
export function libraryScripts(): [string, LuaScript][] {
  const src = new URL('../../packages/floodgate/src/', import.meta.url)
  return readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((f) => /(^|\/)lua\/[^/]+-(\d+|n)\.lua$/.test(f))
    .map((f) => [f.split('/').pop()!, new LuaScript(new URL(f, src))])
}

/** Calls and Redis µs (wall, as INFO commandstats counts them) of one command or script. */
export interface CommandTime {
  calls: number
  usec: number
}

export interface TapResult {
  /** Per command: a known script's EVALSHA by its label, EVAL by `eval <file>`, others by name. */
  byCommand: Map<string, CommandTime>
  longest: { us: number; command: string }
  /** The bench's own longest command (the drains: LATENCY LATEST counts them too). */
  ownLongestUs: number
  /** Entries at or over `boundUs`. */
  overBound: number
  entries: number
}

/**
 * Logs every command of the service on a private redis-server (slowlog-log-slower-than 0) and
 * drains the log every 250 ms (SLOWLOG GET + RESET in one MULTI, nothing lost between them): the
 * µs of each script by its SHA1 (INFO commandstats has one line for every EVALSHA, whatever the
 * script), the longest command and the entries at or over `boundUs`. A command's duration is
 * measured before its entry is made, so the tap does not lengthen it.
 */
export class SlowlogTap {
  private readonly names = new Map<string, string>()
  private readonly result: TapResult = {
    byCommand: new Map(),
    longest: { us: 0, command: '' },
    ownLongestUs: 0,
    overBound: 0,
    entries: 0,
  }
  private timer: NodeJS.Timeout | undefined
  private draining: Promise<void> = Promise.resolve()

  constructor(
    private readonly redis: Redis,
    scripts: readonly (readonly [label: string, script: LuaScript])[],
    private readonly boundUs: number,
  ) {
    for (const [label, script] of scripts) this.names.set(script.sha1, label)
  }

  async start(): Promise<void> {
    await this.redis.config('SET', 'slowlog-max-len', String(MAX_LEN))
    await this.redis.config('SET', 'slowlog-log-slower-than', '0')
    await this.redis.slowlog('RESET')
    this.timer = setInterval(() => {
      this.draining = this.draining.then(() => this.drain())
    }, DRAIN_EVERY_MS)
  }

  /** Stops logging (threshold back to `restoreUs`) and returns what was logged. */
  async stop(restoreUs: number): Promise<TapResult> {
    clearInterval(this.timer)
    await this.draining
    await this.redis.config('SET', 'slowlog-log-slower-than', String(restoreUs))
    await this.drain()
    return this.result
  }

  private async drain(): Promise<void> {
    const replies = await this.redis.multi().slowlog('GET', -1).slowlog('RESET').exec()
    const entries = (replies?.[0]?.[1] ?? []) as Entry[]
    for (const [, , us, args] of entries) {
      const name = this.nameOf(args)
      if (OWN.test(name)) {
        this.result.ownLongestUs = Math.max(this.result.ownLongestUs, us)
        continue
      }
      const t = this.result.byCommand.get(name) ?? { calls: 0, usec: 0 }
      t.calls++
      t.usec += us
      this.result.byCommand.set(name, t)
      this.result.entries++
      if (us >= this.boundUs) this.result.overBound++
      if (us > this.result.longest.us) this.result.longest = { us, command: name }
    }
  }

  private nameOf(args: readonly string[]): string {
    const cmd = String(args[0] ?? '').toLowerCase()
    if (cmd === 'evalsha') return this.names.get(String(args[1])) ?? `evalsha ${String(args[1]).slice(0, 8)}`
    if (cmd === 'eval') return `eval ${/[\w-]+\.lua/.exec(args[1] ?? '')?.[0] ?? '?'}`
    return cmd
  }
}

/** Calls and µs of the named scripts together. */
export function scriptTime(tap: TapResult, names: readonly string[]): CommandTime {
  const out = { calls: 0, usec: 0 }
  for (const [name, t] of tap.byCommand)
    if (names.some((n) => name === n || name === `eval ${n}`)) {
      out.calls += t.calls
      out.usec += t.usec
    }
  return out
}

/** Keys matching `pattern` (SCAN, 1,000 a page). */
export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const out: string[] = []
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = next
    out.push(...keys)
  } while (cursor !== '0')
  return out
}

/** MEMORY USAGE (SAMPLES 0: every element) summed over `keys`, and the largest, pipelined 500 a time. */
export async function memoryOf(
  redis: Redis,
  keys: readonly string[],
): Promise<{ total: number; largest: number }> {
  let total = 0
  let largest = 0
  for (let i = 0; i < keys.length; i += 500) {
    const pipeline = redis.pipeline()
    for (const key of keys.slice(i, i + 500)) pipeline.memory('USAGE', key, 'SAMPLES', '0')
    for (const [, bytes] of (await pipeline.exec()) ?? []) {
      total += Number(bytes ?? 0)
      largest = Math.max(largest, Number(bytes ?? 0))
    }
  }
  return { total, largest }
}

/** Members of a SET, read with SSCAN (a 1M-member SMEMBERS would be one long command). */
export async function setMembers(redis: Redis, key: string): Promise<string[]> {
  const out: string[] = []
  let cursor = '0'
  do {
    const [next, members] = await redis.sscan(key, cursor, 'COUNT', 1000)
    cursor = next
    out.push(...members)
  } while (cursor !== '0')
  return out
}

/** The highest `max` of LATENCY LATEST (ms) and its event; the monitor's threshold is set by the caller. */
export async function latencyLatest(redis: Redis): Promise<{ ms: number; event: string }> {
  const rows = (await redis.call('LATENCY', 'LATEST')) as [string, number, number, number][]
  let out = { ms: 0, event: '' }
  for (const [event, , , max] of rows) if (max > out.ms) out = { ms: max, event }
  return out
}
