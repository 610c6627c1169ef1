import { fullJitterDelayMs } from '../../backoff/index.js'
import { StoreUnavailableError } from '../../errors/index.js'
import { INVALIDATION_RETRY_BASE_MS } from '../invalidation.js'
import { UNAVAILABLE } from '../l2/l2_store.js'
import type { CacheStack } from '../stack.js'
import { CacheView } from '../view.js'

/** Result of {@link CacheNamespace.clear}. */
export interface ClearResult {
  /** The namespace's generation after the clear (its keys now carry this number). */
  generation: number
  /** Whether the clear reached the bus (when not, it is retried in the background). */
  published: boolean
}

/**
 * A namespace of a cache (`cache.namespace(name)`): every key operation of the cache, on keys of
 * its own, and {@link clear}. Keys carry the namespace's generation (a Redis counter), so a clear
 * is one `INCR`: no key scan, O(1) whatever the namespace holds.
 */
export class CacheNamespace<T = unknown> extends CacheView<T> {
  /** @internal made by `Cache.namespace(name)`. */
  constructor(
    stack: CacheStack<T>,
    /** The namespace's name. */
    readonly name: string,
  ) {
    super(stack, name)
  }

  /**
   * Drops every entry of this namespace, on every instance: `INCR` of its generation in Redis
   * (values, negative entries and stale entries of older generations are never read again and
   * expire on their own TTL), then a bus message that moves every instance's generation, so their
   * L1 entries of the namespace are no longer found either. A load that began before the clear
   * fills an older generation, which nobody reads. An instance whose bus connection dropped reads
   * the generation again after it reconnects. A failed publish is retried in the background
   * (full-jitter backoff under a cap of 100 ms doubling, `invalidateRetries` times, then a `background_error` with task `clear`).
   * @throws {StoreUnavailableError} when the `INCR` failed (nothing was cleared).
   */
  async clear(): Promise<ClearResult> {
    const { stack, name } = this
    const bumped = await stack.l2.bumpGeneration(name)
    if (bumped === UNAVAILABLE)
      throw new StoreUnavailableError(`cache ${stack.o.name}: clear of namespace ${name} failed`)
    const generation = stack.generations.advance(name, bumped)
    stack.l1?.delete([])
    const message = JSON.stringify({ from: stack.instanceId, namespace: name, generation })
    const published = await stack.l2.publishInvalidation(message)
    if (!published) void this.republish(message, 1)
    return { generation, published }
  }

  private async republish(message: string, attempt: number): Promise<void> {
    const { stack } = this
    if (attempt > stack.o.invalidateRetries) {
      const error = new Error(
        `clear of namespace ${this.name} still unpublished after ${attempt - 1} retries`,
      )
      stack.events.emit('background_error', { key: this.name, error, task: 'clear' })
      return
    }
    const waitMs = fullJitterDelayMs(attempt - 1, INVALIDATION_RETRY_BASE_MS, Number.POSITIVE_INFINITY)
    await new Promise((resolve) => setTimeout(resolve, waitMs).unref())
    if (!(await stack.l2.publishInvalidation(message))) await this.republish(message, attempt + 1)
  }
}
