import type { CircuitBreaker } from '../circuit_breaker/index.js'
import { InvalidArgumentError, StoreUnavailableError } from '../errors/index.js'
import type { CacheEventEmitter } from './events.js'
import { type InvalidationResult, invalidateKeys } from './invalidation.js'
import { UNAVAILABLE, type Unavailable } from './l2/l2_store.js'
import { isRootKey, scopedId, userKeyOf } from './namespace/scoped_key.js'
import type { NotFound } from './not_found.js'
import { type CallOptions, layerCallOptions } from './options.js'
import { peekOne } from './peek.js'
import { afterBoth } from './permit.js'
import { type BatchLoader, readMany } from './read_many.js'
import { readLocal, readOne } from './read_one.js'
import { type CacheStack, type Loader, unwrap } from './stack.js'

/**
 * The key operations of a cache, over one shared {@link CacheStack}: the root {@link Cache} and
 * each namespace view (`cache.namespace(name)`) are views that differ only in where their keys
 * live (`namespace`: undefined at the root).
 */
export abstract class CacheView<T> {
  protected constructor(
    protected readonly stack: CacheStack<T>,
    private readonly ns: string | undefined,
  ) {}

  /** Typed events: `outcome`, `breaker`, `background_error` (one emitter per cache, shared by its namespaces). */
  get events(): CacheEventEmitter {
    return this.stack.events
  }

  /** The L2 circuit breaker (its `state` is observable). */
  get breaker(): CircuitBreaker {
    return this.stack.breaker
  }

  /** This instance's id on the invalidation bus. */
  get instanceId(): string {
    return this.stack.instanceId
  }

  /**
   * Returns the value of `key`, loading it with `loader` on a miss. The order of steps (L1 →
   * in-process Bloom gate → L2 → remote Bloom gate → singleflight → Redis lock → load and fill)
   * is described in the cache README and `read_one.ts`.
   * @returns the value, or `undefined` when the loader answered {@link NOT_FOUND}.
   * @throws whatever `loader` throws (errors are never cached); {@link InvalidArgumentError} for bad
   *   options or a key starting with `\0`. Redis failures are never thrown: the read degrades to L1
   *   and the loader.
   */
  getOrLoad(key: string, loader: Loader<T>, options?: CallOptions): Promise<T | undefined> {
    // not async: readOne's promise is handed back as is (an async wrapper costs a promise and two hops)
    try {
      const o = layerCallOptions(this.stack.o.call, options)
      const idOf = this.scope()
      if (typeof idOf === 'function') return afterBoth(o.permit, readOne(this.stack, idOf(key), loader, o))
      return afterBoth(
        o.permit,
        idOf.then(async (resolved) =>
          resolved === UNAVAILABLE
            ? unwrap(await this.stack.runLoader(checked(key), loader, o.permit))
            : readOne(this.stack, resolved(key), loader, o),
        ),
      )
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /**
   * {@link getOrLoad}'s first step alone, synchronously: what L1 holds for `key` right now,
   * counted as the outcome getOrLoad would count (`l1_hit` / `negative_hit`). When it gives
   * `undefined` nothing is counted: call getOrLoad.
   * @returns the value getOrLoad would give now; `NOT_FOUND` for a cached "not found"
   *   (getOrLoad: `undefined`); `undefined` when L1 is off or holds no fresh entry, or in a
   *   namespace whose generation this process does not know yet (it needs Redis).
   * @throws {InvalidArgumentError} for a key starting with `\0`.
   */
  getLocal(key: string): T | NotFound | undefined {
    const id = checked(key)
    const ns = this.ns
    if (ns === undefined) return readLocal(this.stack, id, Date.now())?.value
    const generation = this.stack.generations.peek(ns)
    if (generation === undefined) return undefined
    return readLocal(this.stack, scopedId(ns, generation, id), Date.now())?.value
  }

  /**
   * Many keys at once, in the order of {@link getOrLoad} with one batched step per tier: L1, Bloom
   * gate, one MGET, one `batchLoader` call for the misses, parallel fills.
   * @returns a Map from each distinct key to its value, `undefined` for not found.
   * @throws whatever `batchLoader` throws; {@link InvalidArgumentError} for a key starting with `\0`.
   */
  async getManyOrLoad(
    keys: readonly string[],
    batchLoader: BatchLoader<T>,
    options?: CallOptions,
  ): Promise<Map<string, T | undefined>> {
    const o = layerCallOptions(this.stack.o.call, options)
    const ids = await this.idsOf(keys)
    if (ids !== UNAVAILABLE) return afterBoth(o.permit, readMany(this.stack, ids, batchLoader, o))
    // The namespace's generation is unknown (Redis down): load, cache nothing.
    const distinct = [...new Set(keys)]
    if (o.permit !== undefined) await o.permit
    const loaded = await this.stack.timedLoad(undefined, async () => batchLoader(distinct))
    return new Map(
      distinct.map((key, i) => {
        const value = loaded instanceof Map ? loaded.get(key) : loaded[i]
        return [key, value === undefined ? undefined : unwrap(value)]
      }),
    )
  }

  /**
   * Reads `key` without loading: L1, then L2 (kept in L1 on a hit). Fresh values only: a stale
   * entry (past its TTL, even inside the stale-while-revalidate window), a negative entry, a miss
   * and an unreachable Redis all give `undefined`. Not counted in the outcome events (those
   * describe `getOrLoad` calls, so their hit ratio stays per load-capable call).
   * @returns the value, or `undefined`.
   */
  async get(key: string): Promise<T | undefined> {
    const idOf = await this.scope()
    return idOf === UNAVAILABLE ? undefined : peekOne(this.stack, idOf(key), this.stack.o.call)
  }

  /** Whether {@link get} finds a fresh value for `key` (same rules, no load). */
  async has(key: string): Promise<boolean> {
    return (await this.get(key)) !== undefined
  }

  /**
   * Removes `keys` everywhere, as {@link invalidate} (the name peers use). Never throws on Redis errors.
   */
  delete(keys: string | readonly string[]): Promise<InvalidationResult> {
    return this.invalidate(keys)
  }

  /**
   * Writes `value` directly (write-through): L2 via set-2.lua (moves the version,
   * so older in-flight loads cannot overwrite it), this process's L1, and an L1
   * invalidation for the other instances.
   * @throws {StoreUnavailableError} when Redis failed (the L1 invalidation is still published when possible).
   */
  async set(key: string, value: T, options?: CallOptions): Promise<void> {
    const o = layerCallOptions(this.stack.o.call, options)
    const idOf = await this.scope(true)
    if (idOf === UNAVAILABLE)
      throw new StoreUnavailableError(`cache ${this.stack.o.name}: namespace generation unknown`)
    const id = idOf(key)
    const { stack } = this
    const envelope = stack.envelope(value, o, '0')
    stack.l1?.delete([id])
    const epoch = stack.epoch
    try {
      await stack.l2.set(id, envelope.bytes, envelope.physicalTtlMs, stack.versionTtlMs)
      stack.rememberLoaded(id, value, envelope, o, epoch)
    } finally {
      await stack.l2.publishInvalidation(JSON.stringify({ from: stack.instanceId, keys: [id] }))
    }
  }

  /**
   * Invalidates `keys` everywhere: this L1 at once, L2 (delete + version bump,
   * so a load that began earlier cannot write afterwards), and every other
   * instance's L1 through the bus (published even if the L2 step failed; failed
   * L2 steps are retried in the background). Never throws on Redis errors: in a namespace whose
   * generation cannot be read, nothing is done and each key is reported as a `background_error`.
   */
  async invalidate(keys: string | readonly string[]): Promise<InvalidationResult> {
    const list = typeof keys === 'string' ? [keys] : keys
    const ids = await this.idsOf(list, true)
    const { stack } = this
    const onGiveUp = (id: string, error: unknown) =>
      stack.events.emit('background_error', { key: userKeyOf(id), error, task: 'invalidate' })
    if (ids === UNAVAILABLE) {
      const error = new StoreUnavailableError(`cache ${stack.o.name}: namespace generation unknown`)
      for (const key of new Set(list)) onGiveUp(key, error)
      return { retrying: [], published: false }
    }
    const result = await invalidateKeys(
      {
        instanceId: stack.instanceId,
        l1: stack.l1,
        l2: stack.l2,
        versionTtlMs: stack.versionTtlMs,
        retries: stack.o.invalidateRetries,
        onGiveUp,
      },
      ids,
    )
    return { ...result, retrying: result.retrying.map(userKeyOf) }
  }

  /**
   * How this view turns a key into an id (see `namespace/scoped_key.ts`): synchronous at the root
   * and in a namespace whose generation is known; {@link UNAVAILABLE} when that generation cannot
   * be read. `forWrite` reads it even while the breaker is open, as the other writes do.
   */
  private scope(forWrite = false): IdOf | Promise<IdOf | Unavailable> {
    const ns = this.ns
    if (ns === undefined) return rootId
    const generation = this.stack.generations.current(ns, forWrite)
    if (typeof generation === 'number') return (key) => scopedId(ns, generation, checked(key))
    return generation.then((g) => (g === UNAVAILABLE ? g : (key: string) => scopedId(ns, g, checked(key))))
  }

  private async idsOf(keys: readonly string[], forWrite = false): Promise<string[] | Unavailable> {
    const idOf = await this.scope(forWrite)
    return idOf === UNAVAILABLE ? idOf : keys.map(idOf)
  }
}

type IdOf = (key: string) => string

/** @throws {InvalidArgumentError} for a key starting with `\0` (reserved for namespaced ids). */
function checked(key: string): string {
  if (!isRootKey(key)) throw new InvalidArgumentError('key', 'must not start with \\0')
  return key
}

const rootId: IdOf = checked
