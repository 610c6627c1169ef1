import { STARTUP_DEFAULTS } from '../deadline/index.js'
import { InvalidArgumentError } from '../errors/index.js'
import type { L1Cache } from './l1/l1_cache.js'
import { CacheNamespace } from './namespace/cache_namespace.js'
import type { CacheOptions } from './options.js'
import { CacheStack } from './stack.js'
import { CacheView } from './view.js'

export type { Loader } from './stack.js'

/** Namespace names: part of Redis keys and bus messages. */
const NAMESPACE_NAME = /^[A-Za-z0-9_.-]+$/

/**
 * A cache-aside cache: L1 (in-process LRU) → Bloom gate → L2 (Redis) → loader,
 * with singleflight per process, a Redis mutex per key across processes,
 * negative caching, TTL jitter, stale-while-revalidate, versioned invalidation
 * broadcast to every instance's L1, namespaces cleared in O(1), and a circuit breaker on Redis.
 * Where the Bloom gate is asked depends on the gate (see the cache README: in-process before L2,
 * remote after an L2 miss), the same for single and batch reads.
 * Create with {@link createCache}.
 */
export class Cache<T = unknown> extends CacheView<T> {
  /** @throws {InvalidArgumentError} naming the offending option. */
  constructor(options: CacheOptions<T>) {
    super(new CacheStack<T>(options), undefined)
  }

  /**
   * A view of this cache whose keys live in namespace `name` (same tiers, bus, breaker, events
   * and options): the same key in two namespaces, or in a namespace and at the root, are two
   * entries. {@link CacheNamespace.clear} drops the whole namespace at once.
   * @throws {InvalidArgumentError} when `name` does not match `[A-Za-z0-9_.-]+`.
   */
  namespace(name: string): CacheNamespace<T> {
    if (typeof name !== 'string' || !NAMESPACE_NAME.test(name))
      throw new InvalidArgumentError('namespace', 'must match [A-Za-z0-9_.-]+')
    return new CacheNamespace(this.stack, name)
  }

  /**
   * Resolves once the client is connected and the bus subscription is in place, within
   * `STARTUP_DEFAULTS.waitMs` (2,000 ms); see {@link readyWithin}. Calls made before work too,
   * but they find Redis unavailable (the offline queue is off).
   * @throws {StoreUnavailableError} when Redis is not reachable in time.
   */
  get ready(): Promise<void> {
    return this.stack.readyWithin(STARTUP_DEFAULTS.waitMs)
  }

  /**
   * Like {@link ready}, with its own bound `timeoutMs` (ms).
   * @throws {StoreUnavailableError} when the client or the bus is not ready within `timeoutMs`.
   */
  readyWithin(timeoutMs: number): Promise<void> {
    return this.stack.readyWithin(timeoutMs)
  }

  /** The L1 tier, for inspection (entries, bytes); undefined when L1 is off. Namespaced entries are keyed by internal ids. */
  get local(): L1Cache<T> | undefined {
    return this.stack.l1
  }

  /**
   * Closes the bus subscriber connection (the Redis client passed in stays open; so does an
   * `l1.tracking`, which L1 stops listening to); namespace views share it.
   */
  close(): void {
    this.stack.close()
  }
}

/**
 * Creates a cache. See {@link CacheOptions} for every option, its default and unit.
 * @throws {InvalidArgumentError} naming the offending option.
 */
export function createCache<T = unknown>(options: CacheOptions<T>): Cache<T> {
  return new Cache<T>(options)
}
