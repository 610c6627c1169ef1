import { type ChildProcess, spawn } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { freePort, PrivateRedis, until } from '@floodgate/test-support'
import { BloomFilter } from 'floodgate'
import { Redis } from 'ioredis'
import { fields } from '../../apps/video-api/src/config/fields.js'
import { positiveIntegerEnv } from './env_integer.js'
import { sleep, stop, track } from './processes.js'

/** The three designs every scenario runs side by side. */
export type ModeName = 'none' | 'legacy' | 'floodgate'
export const MODES: readonly ModeName[] = ['none', 'legacy', 'floodgate']
export const MODE_LABEL: Record<ModeName, string> = {
  none: 'no cache',
  legacy: 'older design',
  floodgate: 'floodgate',
}
export const MODE_COLOR: Record<ModeName, string> = {
  none: '#d62728',
  legacy: '#ff7f0e',
  floodgate: '#1f77b4',
}

/** Rate-limit quotas of the `bench` profile (per 10 s window); the abusive-client scenario floods past them. */
export const QUOTAS = { windowMs: 10_000, user: 300, anonymous: 300, write: 2_000 } as const

/**
 * What the instances run with. `bench`: the flood scenarios' settings (a pool of 5, the run's short
 * cache TTL, {@link QUOTAS}; Redis timeouts at their defaults). `defaults`: the service's own defaults for everything but what a
 * deployment must say (port, database, Redis, prefix, JWT secret, log level, cache mode) and
 * TRUST_PROXY=true, so that the bench can speak for many clients (X-Forwarded-For). `viral`: the
 * `defaults` profile, and the older design's instances also write interactions in the older
 * layout (LEGACY_INTERACTIONS=true, see legacy/interactions.ts). `defaults` and `viral` set
 * DB_POOL_MIN=2: three deployments of 4 instances share one PostgreSQL (max_connections 100), and
 * 12 pools keeping the default's full size (10 connections each) would not fit; the pool's size
 * stays the default, and an instance that idles gives back all but 2.
 */
export type Profile = 'bench' | 'defaults' | 'viral'

export interface ModeOptions {
  mode: ModeName
  /** The profile the instances start with ({@link ModeDeployment.use} switches). */
  profile: Profile
  database: string
  instances: number
  /** Cache TTL (ms): floodgate draws from [ttlMs, 2 × ttlMs], the older design uses ttlMs fixed. */
  ttlMs: number
  jwtSecret: string
  logDir: string
}

const repo = fileURLToPath(new URL('../../', import.meta.url))

export const pgUrl = (database: string) => `postgres://postgres@127.0.0.1:5432/${database}`

/** One mode's deployment: its own database (a template copy), its own private Redis, N video-api processes. */
export class ModeDeployment {
  readonly bases: string[] = []
  private children: ChildProcess[] = []
  /** Times the floodgate instances were restarted because their Bloom rebuild at start failed. */
  bloomRestarts = 0
  redis!: Redis
  readonly prefix = 'va'
  private videoBloom: BloomFilter | undefined
  private profile: Profile

  private constructor(
    readonly options: ModeOptions,
    readonly redisServer: PrivateRedis,
  ) {
    this.profile = options.profile
  }

  get mode(): ModeName {
    return this.options.mode
  }

  static async start(options: ModeOptions): Promise<ModeDeployment> {
    const logFile = `${options.logDir}/redis-${options.mode}.log`
    const d = new ModeDeployment(options, await PrivateRedis.start({ logFile, onSpawn: track }))
    d.redis = new Redis(d.redisServer.url, { maxRetriesPerRequest: 1, retryStrategy: () => 200 })
    d.redis.on('error', () => {})
    await d.startInstances()
    return d
  }

  private async startInstances(): Promise<void> {
    const ports = await Promise.all(Array.from({ length: this.options.instances }, () => freePort()))
    for (const port of ports) this.children.push(this.spawnInstance(port))
    for (const port of ports) {
      const base = `http://127.0.0.1:${port}`
      await until(
        () =>
          fetch(`${base}/healthz`).then(
            (r) => r.ok,
            () => false,
          ),
        // a dozen instances compiling TypeScript at once on a loaded 2-core box took over 60 s
        { timeoutMs: 180_000, everyMs: 100, what: `${this.mode} video-api on ${port} healthy` },
      )
      this.bases.push(base)
    }
  }

  /**
   * True when the Bloom filter of videos has a ready generation (floodgate's rebuild at start
   * succeeded): one HMGET of its meta hash, the filter the instances build from the same settings.
   */
  async bloomReady(): Promise<boolean> {
    this.videoBloom ??= new BloomFilter({
      redis: this.redis,
      prefix: this.prefix,
      name: 'videos',
      bits: Number(process.env.BLOOM_BITS ?? fields.bloomBits.default),
      hashes: Number(process.env.BLOOM_HASHES ?? fields.bloomHashes.default),
    })
    return (await this.videoBloom.readyGeneration()) !== null
  }

  /**
   * floodgate only: waits for the Bloom rebuild the instances start in the background; if every
   * instance's rebuild failed (video-api does not retry it), restarts the instances, up to `attempts` times.
   */
  async ensureBloom(log: (message: string) => void, attempts = 3): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const deadline = Date.now() + 15_000
      while (Date.now() < deadline && !(await this.bloomReady())) await sleep(250)
      if (await this.bloomReady()) return
      if (attempt >= attempts) throw new Error('the Bloom filter never became ready')
      log(
        "  warning: floodgate's Bloom rebuild at start failed on every instance (see logs); restarting them",
      )
      this.bloomRestarts++
      await this.restartInstances()
    }
  }

  /**
   * Restarts the instances with `profile` unless they run with it already (same Redis, same
   * database, fresh processes: empty L1); floodgate then waits for its Bloom filter ({@link ensureBloom}).
   */
  async use(profile: Profile, log: (message: string) => void): Promise<void> {
    if (profile === this.profile) return
    const started = performance.now()
    this.profile = profile
    await this.restartInstances()
    if (this.mode === 'floodgate') await this.ensureBloom(log)
    log(
      `  ${MODE_LABEL[this.mode]} instances restarted with the ${profile} profile in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    )
  }

  private async restartInstances(): Promise<void> {
    await Promise.all(this.children.map((c) => stop(c)))
    this.children = []
    this.bases.length = 0
    await this.startInstances()
  }

  /** The instance environment: what every profile sets, then the `bench` profiles' settings. */
  private env(port: number): NodeJS.ProcessEnv {
    const o = this.options
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: pgUrl(o.database),
      REDIS_URL: this.redisServer.url,
      REDIS_PREFIX: this.prefix,
      JWT_SECRET: o.jwtSecret,
      SEED_ON_EMPTY: 'false',
      // BENCH_LOG_LEVEL=info: one line per request with its server-side responseTime (ms), and the
      // recovery and rebuild reports; costs the instances CPU, so not for the published figures
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      CACHE_MODE: o.mode,
      TRUST_PROXY: 'true',
    }
    if (this.profile === 'viral' && o.mode === 'legacy') env.LEGACY_INTERACTIONS = 'true'
    // 12 instances on one PostgreSQL: see Profile
    if (this.profile !== 'bench') return { ...env, DB_POOL_MIN: '2' }
    return {
      ...env,
      DB_POOL_MAX: '5',
      CACHE_TTL_MIN_MS: String(o.ttlMs),
      CACHE_TTL_MAX_MS: String(2 * o.ttlMs),
      LEGACY_TTL_MS: String(o.ttlMs),
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_USER_LIMIT: String(QUOTAS.user),
      RATE_LIMIT_USER_WINDOW_MS: String(QUOTAS.windowMs),
      RATE_LIMIT_ANONYMOUS_LIMIT: String(QUOTAS.anonymous),
      RATE_LIMIT_ANONYMOUS_WINDOW_MS: String(QUOTAS.windowMs),
      RATE_LIMIT_WRITE_LIMIT: String(QUOTAS.write),
      RATE_LIMIT_WRITE_WINDOW_MS: String(QUOTAS.windowMs),
    }
  }

  private spawnInstance(port: number): ChildProcess {
    const o = this.options
    const log = createWriteStream(`${o.logDir}/video-api-${o.mode}-${port}.log`)
    const args = ['--conditions=floodgate-source', '--import', 'tsx']
    // BENCH_CPU_PROFILE_DIR=<dir>: each instance writes a V8 CPU profile to <dir>/<mode> when it exits;
    // BENCH_CPU_PROFILE_INTERVAL_US: its sampling interval (µs; V8's default 1000 costs the most CPU)
    const profileDir = process.env.BENCH_CPU_PROFILE_DIR
    if (profileDir) args.push('--cpu-prof', `--cpu-prof-dir=${profileDir}/${o.mode}`)
    const intervalUs = profileDir ? positiveIntegerEnv('BENCH_CPU_PROFILE_INTERVAL_US', 'µs') : undefined
    if (intervalUs !== undefined) args.push(`--cpu-prof-interval=${intervalUs}`)
    if (o.mode === 'legacy') args.push('--import', `${repo}bench/scenarios/legacy/register.ts`)
    args.push(`${repo}apps/video-api/src/main.ts`)
    const child = track(
      spawn(process.execPath, args, {
        cwd: repo,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: this.env(port),
      }),
    )
    child.stdout?.pipe(log)
    child.stderr?.pipe(log)
    return child
  }

  /** Deletes this mode's read-cache keys (floodgate `va:c:*`, older design `va:legacy:*`) from its private Redis. */
  async clearCache(): Promise<number> {
    let deleted = 0
    for (const pattern of [`${this.prefix}:c:*`, `${this.prefix}:legacy:*`]) {
      let cursor = '0'
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
        cursor = next
        if (keys.length > 0) deleted += await this.redis.unlink(...keys)
      } while (cursor !== '0')
    }
    return deleted
  }

  async stop(): Promise<void> {
    await Promise.all(this.children.map((c) => stop(c)))
    this.redis?.disconnect()
    await this.redisServer.destroy()
  }
}
