import { EventEmitter } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { fullJitterDelayMs } from '../backoff/index.js'
import { InvalidArgumentError, StoreUnavailableError } from '../errors/index.js'
import { type Logger, LogThrottle } from '../observability/index.js'
import { KeySpace, type RedisClient } from '../redis/index.js'
import { nonNegativeInteger, positiveInteger } from '../validation/index.js'
import { BLOOM_REBUILD_DEFAULTS } from './defaults.js'
import { BloomLayout, type Generations, sameGenerations } from './layout.js'
import { BitPositions } from './positions.js'
import { type RebuildOptions, type RebuildResult, rebuildGeneration } from './rebuild.js'
import { announceReply, announceScript } from './scripts.js'
import { checkBatches, groupByShard, writeBatches } from './shard_ops.js'
import { bloomSize, defaultShards } from './sizing.js'

export interface BloomFilterOptions {
  redis: RedisClient
  /** Key space of the filter's keys. Give this or `prefix`. */
  keySpace?: KeySpace
  /** Key prefix, when no `keySpace` is given. */
  prefix?: string
  /** Filter name (part of every key). */
  name: string
  /** Expected items n; with `falsePositiveRate`, sizes the filter by {@link bloomSize}. */
  expectedItems?: number
  /** Target false-positive rate p at n items, in (0, 1). */
  falsePositiveRate?: number
  /** Total bits m, instead of n and p (rounded up to a multiple of `shards`). */
  bits?: number
  /** Hash functions k, with `bits`. */
  hashes?: number
  /** Shard keys, each ≤ 2^32 bits. @default ⌈m / 2^23⌉ (each shard ≤ 8 Mibit = 1 MiB) */
  shards?: number
  /** Attempts of a reliable `add` before it throws. @default 3 */
  addAttempts?: number
  /** Cap of the wait before the 2nd attempt (ms, full jitter), doubling after. @default 25 */
  addRetryBaseMs?: number
  /** Items per script call (bounds how long one Lua call blocks Redis). @default 1000 */
  itemsPerCall?: number
  /**
   * Largest filter (m / 8 bytes) a rebuild builds in process memory before writing each shard
   * once; a larger one is written chunk by chunk with `itemsPerCall` items per script call (about
   * 20 times the CPU, here and in Redis). @default 67_108_864 (64 MiB: m up to 2^29 bits)
   */
  rebuildBufferMaxBytes?: number
  /**
   * Longest run (ms) of a rebuild's CPU work (hashing ids, encoding writes) before it lets the
   * event loop run (`setImmediate`): what a request on the rebuilding process waits behind.
   * @default 5 (`BLOOM_REBUILD_DEFAULTS.sliceMs`)
   */
  rebuildSliceMs?: number
  /**
   * Where the filter logs a query that failed open on a Redis error or unstable generations
   * (warn, at most one line per reason per {@link FAIL_OPEN_LOG_INTERVAL_MS}); see {@link Logger}.
   * @default none (the `failOpen` event and `stats` only)
   */
  logger?: Logger
}

/** Shortest time (ms) between two fail-open log lines of one reason: the event and stats count every one. */
export const FAIL_OPEN_LOG_INTERVAL_MS = 10_000

/** Emitted as `failOpen` when a query answered "maybe" for every item without asking the bits. */
export interface BloomFailOpenEvent {
  /** `not-ready`: never built; `redis-error`: Redis failed; `unstable`: generations kept changing. */
  reason: 'not-ready' | 'redis-error' | 'unstable'
  items: number
  error?: unknown
}

const REDIS_MAX_BITS = 2 ** 32
/** A query or add re-reads the generation pointers at most this many times per call. */
const MAX_GENERATION_CHANGES = 3

/**
 * A Bloom filter on Redis bitmaps: `m` bits over `shards` keys, `k`
 * bit positions per item by double hashing (see {@link BitPositions}); every
 * item lives in one shard, so a batch costs one script call per shard touched,
 * all sent together (one round trip, plus the generation-pointer read in the
 * same flight).
 *
 * Answers: `false` = definitely absent; `true` = maybe present. It fails open:
 * not built yet or Redis failing → `true` (and a `failOpen` event, counted in
 * `stats`). A rebuild builds a new generation while queries keep using the
 * ready one, so a query never gets a false negative for an item whose `add`
 * resolved (or that the rebuild source yielded).
 */
export class BloomFilter extends EventEmitter<{ failOpen: [BloomFailOpenEvent] }> {
  readonly name: string
  /** Total bits m (a multiple of `shards`). */
  readonly bits: number
  readonly hashes: number
  readonly shards: number
  readonly bitsPerShard: number
  /** Counts since construction. */
  readonly stats = { failOpenNotReady: 0, failOpenRedisError: 0, failOpenUnstable: 0, addRetries: 0 }
  private readonly redis: RedisClient
  private readonly keySpace: KeySpace
  private readonly layout: BloomLayout
  private readonly positions: BitPositions
  private readonly addAttempts: number
  private readonly addRetryBaseMs: number
  private readonly itemsPerCall: number
  private readonly rebuildBufferMaxBytes: number
  private readonly rebuildSliceMs: number
  private generations: Generations | undefined
  private readonly logger: Logger | undefined
  private readonly logThrottle = new LogThrottle<BloomFailOpenEvent['reason']>(FAIL_OPEN_LOG_INTERVAL_MS)

  /** @throws {InvalidArgumentError} on missing or out-of-range options. */
  constructor(options: BloomFilterOptions) {
    super()
    this.redis = options.redis
    this.name = options.name
    this.logger = options.logger
    if (options.keySpace) this.keySpace = options.keySpace
    else if (options.prefix !== undefined) this.keySpace = new KeySpace(options.prefix)
    else throw new InvalidArgumentError('keySpace', 'give keySpace or prefix')
    if (options.name.length === 0) throw new InvalidArgumentError('name', 'must not be empty')
    const size = resolveSize(options)
    this.shards = positiveInteger('shards', options.shards ?? defaultShards(size.bits))
    this.bitsPerShard = Math.ceil(size.bits / this.shards)
    if (this.bitsPerShard > REDIS_MAX_BITS)
      throw new InvalidArgumentError(
        'shards',
        `too few: a shard would exceed 2^32 bits (${this.bitsPerShard})`,
      )
    this.bits = this.bitsPerShard * this.shards
    this.hashes = size.hashes
    this.addAttempts = positiveInteger('addAttempts', options.addAttempts ?? 3)
    this.addRetryBaseMs = options.addRetryBaseMs ?? 25
    this.itemsPerCall = positiveInteger('itemsPerCall', options.itemsPerCall ?? 1000)
    this.rebuildBufferMaxBytes = nonNegativeInteger(
      'rebuildBufferMaxBytes',
      options.rebuildBufferMaxBytes ?? 2 ** 26,
    )
    this.rebuildSliceMs = positiveInteger(
      'rebuildSliceMs',
      options.rebuildSliceMs ?? BLOOM_REBUILD_DEFAULTS.sliceMs,
    )
    this.layout = new BloomLayout(this.keySpace, this.name, this.bitsPerShard, this.hashes, this.shards)
    this.positions = new BitPositions(this.bitsPerShard, this.hashes, this.shards)
  }

  /** The meta hash key (`ready`, `building`, `seq` fields) and the shard keys of a generation. */
  keys(generation: number): { meta: string; shards: string[] } {
    return { meta: this.layout.meta, shards: this.layout.shardKeys(generation) }
  }

  /**
   * One answer per item: `false` = definitely absent, `true` = maybe present.
   * Never throws for Redis trouble: it answers `true` for all (fail open) and
   * emits `failOpen`.
   */
  async mightContain(items: readonly string[]): Promise<boolean[]> {
    if (items.length === 0) return []
    const batches = groupByShard(this.positions, items, this.itemsPerCall)
    try {
      // a cached "not ready" may be stale: read it afresh then
      const cached = this.generations
      let guess: Generations = cached && cached.ready !== null ? cached : await this.readGenerations()
      for (let i = 0; i < MAX_GENERATION_CHANGES; i++) {
        const ready = guess.ready
        if (ready === null) return this.failOpen('not-ready', items.length)
        const [fresh, answers] = await Promise.all([
          this.readGenerations(),
          checkBatches(this.redis, this.layout, ready, batches, items.length),
        ])
        // trust the bits only if `ready` still pointed at the generation we read
        if (answers !== null && fresh.ready === ready) return answers
        guess = fresh
      }
      return this.failOpen('unstable', items.length)
    } catch (error) {
      return this.failOpen('redis-error', items.length, error)
    }
  }

  /** {@link mightContain} for one item. */
  async mightContainOne(item: string): Promise<boolean> {
    const [answer] = await this.mightContain([item])
    return answer ?? true
  }

  /**
   * Reliable add: sets the items' bits in the ready generation and in the one
   * being rebuilt, if any, then checks that the generation pointers did not
   * move meanwhile (else writes again to the new ones). On a Redis error it
   * retries with full-jitter backoff (`addAttempts`, `addRetryBaseMs`), then
   * throws, so the caller (entity creation) can fail or retry: once `add`
   * resolves, no later query answers "absent" for these items. Call it after
   * the item is committed to the source of truth. A filter never built ignores
   * adds (its first rebuild reads the source). Once the bits are written the add
   * is announced (`announce-1.lua`: numbered in the meta hash's `addseq`,
   * published on the filter's channel) for every {@link BloomReplica}; it
   * resolves only after that.
   * @throws {StoreUnavailableError} when every attempt failed.
   */
  async add(items: readonly string[]): Promise<void> {
    if (items.length === 0) return
    const batches = groupByShard(this.positions, items, this.itemsPerCall)
    let lastError: unknown
    for (let attempt = 0; attempt < this.addAttempts; attempt++) {
      if (attempt > 0) {
        this.stats.addRetries++
        await sleep(fullJitterDelayMs(attempt - 1, this.addRetryBaseMs, Number.POSITIVE_INFINITY))
      }
      try {
        let guess = this.generations ?? (await this.readGenerations())
        for (let i = 0; i < MAX_GENERATION_CHANGES; i++) {
          const targets = [guess.ready, guess.building].filter((g): g is number => g !== null)
          const [fresh, ...written] = await Promise.all([
            this.readGenerations(),
            ...targets.map((g) => writeBatches(this.redis, this.layout, g, batches)),
          ])
          if (sameGenerations(fresh, guess) && written.every(Boolean)) {
            await this.announce(items)
            return
          }
          guess = fresh
        }
        lastError = new StoreUnavailableError(`bloom ${this.name}: generations kept changing during add`)
      } catch (error) {
        lastError = error
      }
    }
    throw lastError instanceof StoreUnavailableError
      ? lastError
      : new StoreUnavailableError(`bloom ${this.name}: add failed`, { cause: lastError })
  }

  /**
   * Rebuilds the filter from `source` (chunks of items, e.g. ids paged from
   * the database) into a new generation, then switches to it atomically and
   * UNLINKs the old one. Until the switch, queries answer from the previous
   * generation (or "maybe" if none). `add` calls during the rebuild write both
   * generations, so nothing is lost by the switch; the source must yield every
   * item committed before it starts being iterated. One rebuild at a time per
   * filter (a Mutex with watchdog). Memory: m / 8 bytes while it runs, unless
   * that exceeds `rebuildBufferMaxBytes` (then chunk by chunk, see the option). Its CPU work runs
   * in slices of `rebuildSliceMs` with a turn of the event loop between them.
   * @throws {LockTimeoutError} when another rebuild holds the lock past `lockWaitMs`.
   * @throws {BloomRebuildError} when the rebuild lost its lock, was aborted or superseded.
   * @throws {BloomRebuiltElsewhereError} when `ifReadyIs` was given and another generation was published.
   * @throws {StoreUnavailableError} on a Redis error. On any error the served generation is unchanged.
   */
  async rebuild(source: AsyncIterable<readonly string[]>, options?: RebuildOptions): Promise<RebuildResult> {
    const ctx = {
      redis: this.redis,
      keySpace: this.keySpace,
      layout: this.layout,
      positions: this.positions,
      itemsPerCall: this.itemsPerCall,
      bufferMaxBytes: this.rebuildBufferMaxBytes,
      sliceMs: this.rebuildSliceMs,
    }
    const result = await rebuildGeneration(ctx, source, options)
    this.generations = undefined
    return result
  }

  /** @internal What a {@link BloomReplica} of this filter needs: its key layout, bit positions and client. */
  replicaSource(): { layout: BloomLayout; positions: BitPositions; redis: RedisClient } {
    return { layout: this.layout, positions: this.positions, redis: this.redis }
  }

  /** Numbers and publishes an add whose bits are written (see `announce-1.lua`). */
  private async announce(items: readonly string[]): Promise<void> {
    announceReply(
      await announceScript.run(this.redis, [this.layout.meta], [this.layout.channel, JSON.stringify(items)]),
    )
  }

  /** True when a generation is ready (queries answer from bits). @throws {StoreUnavailableError} on a Redis error. */
  async isReady(): Promise<boolean> {
    return (await this.readGenerations()).ready !== null
  }

  /** The generation queries answer from; `null` when none is (never built, or Redis lost it). @throws {StoreUnavailableError} on a Redis error. */
  async readyGeneration(): Promise<number | null> {
    return (await this.readGenerations()).ready
  }

  private async readGenerations(): Promise<Generations> {
    try {
      this.generations = await this.layout.readGenerations(this.redis)
      return this.generations
    } catch (error) {
      throw new StoreUnavailableError(`bloom ${this.name}: reading generations failed`, { cause: error })
    }
  }

  private failOpen(reason: BloomFailOpenEvent['reason'], items: number, error?: unknown): boolean[] {
    if (reason === 'not-ready') this.stats.failOpenNotReady++
    else if (reason === 'redis-error') this.stats.failOpenRedisError++
    else this.stats.failOpenUnstable++
    this.emit('failOpen', error === undefined ? { reason, items } : { reason, items, error })
    const suppressed = this.logger && reason !== 'not-ready' ? this.logThrottle.admit(reason) : undefined
    if (this.logger && suppressed !== undefined) {
      this.logger.warn(
        { primitive: 'bloomFilter', filter: this.name, reason, suppressed, err: error },
        `bloom ${this.name}: answered "maybe" without its bits (${reason})`,
      )
    }
    return new Array<boolean>(items).fill(true)
  }
}

function resolveSize(options: BloomFilterOptions): { bits: number; hashes: number } {
  if (options.bits !== undefined || options.hashes !== undefined) {
    const bits = positiveInteger('bits', options.bits ?? 0)
    return { bits, hashes: positiveInteger('hashes', options.hashes ?? 0) }
  }
  if (options.expectedItems === undefined || options.falsePositiveRate === undefined)
    throw new InvalidArgumentError(
      'expectedItems',
      'give expectedItems and falsePositiveRate, or bits and hashes',
    )
  return bloomSize(options.expectedItems, options.falsePositiveRate)
}
