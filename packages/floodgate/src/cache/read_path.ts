import { randomBytes } from 'node:crypto'
import { CacheCore, entryValue, type Loaded, type Loader, unwrap } from './cache_core.js'
import { UNAVAILABLE } from './l2/l2_store.js'
import { isNotFound } from './not_found.js'
import { type CallOptions, layerCallOptions, type ResolvedCallOptions } from './options.js'
import { jitteredMs } from './ttl.js'

/**
 * The read path of a cache (go-zero's cachenode style, in one readable method):
 * L1 → in-process Bloom gate → L2 → stale-while-revalidate → remote Bloom gate (L2 miss only) →
 * singleflight → Redis lock → load and fill, or wait for the fill's wake-up.
 * (One gate per call: in-process ones are asked before L2, remote ones after an L2 miss.)
 */
export class ReadThroughCache<T> extends CacheCore<T> {
  /**
   * Returns the value of `key`, loading it with `loader` on a miss.
   * Order: L1 → in-process Bloom gate (`inProcess: true`) → L2 → (stale inside grace: return it,
   * refresh in the background under the mutex) → on an L2 miss, remote Bloom gate → singleflight →
   * Redis mutex → winner loads and
   * fills; others wait for the fill's wake-up, up to a jittered deadline, then
   * serve stale if they have it or load without writing.
   * @returns the value, or `undefined` when the loader answered {@link NOT_FOUND}.
   * @throws whatever `loader` throws (errors are never cached); {@link InvalidArgumentError} for bad options.
   *   Redis failures are never thrown: the read degrades to L1 and the loader.
   */
  async getOrLoad(key: string, loader: Loader<T>, options?: CallOptions): Promise<T | undefined> {
    const o = layerCallOptions(this.o.call, options)
    const now = Date.now()
    const local = this.l1?.get(key, now)
    if (local !== undefined) {
      this.count(isNotFound(local.value) ? 'negative_hit' : 'l1_hit', key)
      return unwrap(local.value)
    }
    const epoch = this.l1?.epoch ?? 0
    // An in-process gate answers from memory: an absent id then costs no L2 GET and no negative key.
    const inProcessGate = o.bloom !== false && o.bloom.inProcess === true
    if (o.bloom && inProcessGate && !(await this.bloomAllows(o.bloom, [key]))[0]) {
      this.count('bloom_reject', key)
      return undefined
    }
    const raw = await this.l2.read(key)
    const entry = raw === UNAVAILABLE || raw === null ? undefined : await this.decode(key, raw)
    if (entry !== undefined) {
      const value = entryValue(entry)
      if (entry.expiresAtMs > now) {
        this.count(entry.kind === 'negative' ? 'negative_hit' : 'l2_hit', key)
        this.remember(key, entry, o, epoch)
        return unwrap(value)
      }
      if (entry.expiresAtMs + o.staleWhileRevalidateMs > now) {
        this.count('stale_served', key)
        this.refreshInBackground(key, loader, o)
        return unwrap(value)
      }
    }
    // A remote gate guards the loader, so it is asked only now: an L2 hit (or a negative
    // entry) costs no Bloom round trip; a never-seen absent id costs GET + Bloom, no load, no key.
    if (o.bloom && !inProcessGate && !(await this.bloomAllows(o.bloom, [key]))[0]) {
      this.count('bloom_reject', key)
      return undefined
    }
    const stale = entry === undefined ? undefined : entryValue(entry)
    return unwrap(
      await this.flights.run(key, () => this.loadThroughLock(key, loader, o, raw === UNAVAILABLE, stale)),
    )
  }

  /**
   * A miss: become the loader (Redis mutex), or wait for the one that is.
   * `redisDown`: L2 just failed; load directly and keep the result in L1 only.
   */
  private async loadThroughLock(
    key: string,
    loader: Loader<T>,
    o: ResolvedCallOptions,
    redisDown: boolean,
    stale: Loaded<T> | undefined,
  ): Promise<Loaded<T>> {
    const epoch = this.l1?.epoch ?? 0
    if (redisDown) return this.loadWithoutL2(key, loader, o, epoch)
    this.maxLockTtlMs = Math.max(this.maxLockTtlMs, o.lockTtlMs)
    const token = randomBytes(16).toString('hex')
    const deadline = Date.now() + jitteredMs(o.lockWaitMs, o.lockWaitJitterMs)
    let counted = false
    for (;;) {
      const waiter = this.waiters.register(key)
      const claim = await this.l2.claim(key, token, o.lockTtlMs, 'miss')
      if (claim === UNAVAILABLE) {
        waiter.cancel()
        return this.loadWithoutL2(key, loader, o, epoch)
      }
      if (claim.kind === 'acquired') {
        waiter.cancel()
        return this.loadAndFill(key, loader, o, claim.version, token, epoch)
      }
      if (claim.kind === 'exists') {
        waiter.cancel()
        const landed = await this.readLanded(key, o, epoch)
        if (landed !== undefined) return landed
      } else if (!counted) {
        counted = true
        this.count('lock_wait', key)
      }
      const remainingMs = deadline - Date.now()
      if (remainingMs <= 0) {
        waiter.cancel()
        this.count('wait_timeout', key)
        return stale !== undefined ? stale : this.runLoader(key, loader)
      }
      // Woken by the fill's PUBLISH; otherwise re-claim when the holder's lock expires (it may have died).
      const pttlMs = claim.kind === 'busy' ? claim.pttlMs : 0
      if (await waiter.woken(Math.min(remainingMs, pttlMs + Math.floor(Math.random() * 20)))) {
        // The value most likely landed: one GET, and a new claim only if it did not.
        const landed = await this.readLanded(key, o, epoch)
        if (landed !== undefined) return landed
      }
    }
  }

  /** Reads a value another process just filled; undefined when it is not (or no longer) there. */
  private async readLanded(
    key: string,
    o: ResolvedCallOptions,
    epoch: number,
  ): Promise<Loaded<T> | undefined> {
    const raw = await this.l2.read(key)
    const entry = raw === UNAVAILABLE || raw === null ? undefined : await this.decode(key, raw)
    if (entry === undefined) return undefined
    this.count(entry.kind === 'negative' ? 'negative_hit' : 'l2_hit', key)
    this.remember(key, entry, o, epoch)
    return entryValue(entry)
  }

  /** The lock holder: load, then fill-4 (version + token checked, lock released, waiters woken). */
  private async loadAndFill(
    key: string,
    loader: Loader<T>,
    o: ResolvedCallOptions,
    version: string,
    token: string,
    epoch: number,
  ): Promise<Loaded<T>> {
    let value: Loaded<T>
    let envelope: ReturnType<CacheCore<T>['envelope']>
    try {
      value = await this.runLoader(key, loader)
      envelope = this.envelope(value, o, version)
    } catch (error) {
      await this.l2.abandon(key, token, 0)
      throw error
    }
    const result = await this.l2.fill(
      key,
      envelope.bytes,
      envelope.physicalTtlMs,
      version,
      token,
      envelope.mode,
    )
    if (result === 'written' || result === UNAVAILABLE) this.rememberLoaded(key, value, envelope, o, epoch)
    return value
  }

  /** Redis is unavailable: load (singleflight already applies) and keep the result in L1 only. */
  private async loadWithoutL2(
    key: string,
    loader: Loader<T>,
    o: ResolvedCallOptions,
    epoch: number,
  ): Promise<Loaded<T>> {
    const value = await this.runLoader(key, loader)
    this.rememberLoaded(key, value, this.envelope(value, o, '0'), o, epoch)
    return value
  }

  /** Stale-while-revalidate: one refresh per key per process, one cluster-wide (claim in 'refresh' mode). */
  private refreshInBackground(key: string, loader: Loader<T>, o: ResolvedCallOptions): void {
    if (this.refreshes.has(key)) return
    this.refreshes
      .run(key, async () => {
        const epoch = this.l1?.epoch ?? 0
        const token = randomBytes(16).toString('hex')
        const claim = await this.l2.claim(key, token, o.lockTtlMs, 'refresh')
        if (claim === UNAVAILABLE || claim.kind !== 'acquired') return
        let value: Loaded<T>
        let envelope: ReturnType<CacheCore<T>['envelope']>
        try {
          value = await this.runLoader(key, loader)
          envelope = this.envelope(value, o, claim.version)
        } catch (error) {
          // Keep serving stale; hold the lock as a back-off so no instance retries at once.
          await this.l2.abandon(key, token, o.refreshBackoffMs)
          throw error
        }
        const result = await this.l2.fill(
          key,
          envelope.bytes,
          envelope.physicalTtlMs,
          claim.version,
          token,
          envelope.mode,
        )
        if (result === 'written') this.rememberLoaded(key, value, envelope, o, epoch)
      })
      .catch((error: unknown) => this.events.emit('background_error', { key, error, task: 'refresh' }))
  }
}
