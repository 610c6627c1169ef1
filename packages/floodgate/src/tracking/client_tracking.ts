import type { Redis } from 'ioredis'
import { checkDeadline, type Deadline, withinDeadline } from '../deadline/index.js'
import type { RedisClient } from '../redis/index.js'
import { InFlightReads, type TrackedRead } from './in_flight.js'
import { invalidatedKeys } from './invalidation_message.js'
import {
  type ClientTrackingOptions,
  type ResolvedClientTrackingOptions,
  resolveClientTrackingOptions,
} from './options.js'

/** Redis publishes invalidations for a RESP2 `REDIRECT` client on this channel. */
export const INVALIDATION_CHANNEL = '__redis__:invalidate'

/**
 * - `connecting`: the two connections are being set up (or set up again after a loss).
 * - `established`: Redis tracks every read of the data connection and will invalidate it.
 * - `unsupported`: a cluster client (see {@link ClientTracking}), or Redis refused the set-up
 *   (Redis < 6, a proxy or managed service without `CLIENT TRACKING`, an ACL without it);
 *   final for this instance.
 * - `closed`: {@link ClientTracking.close} was called or the user's client ended.
 */
export type TrackingState = 'connecting' | 'established' | 'unsupported' | 'closed'

/** What {@link ClientTracking} saw since it was made. */
export interface ClientTrackingStats {
  /** Times tracking was (re-)established. */
  establishments: number
  /** Times an established tracking was lost (a connection closed, a heartbeat failed). */
  losses: number
  /** Invalidation messages received. */
  invalidations: number
  /** Keys those messages named. */
  invalidatedKeys: number
  /** Flush-all messages received (null payload: FLUSHALL, FLUSHDB). */
  flushes: number
  /** Heartbeats that got no pong within `heartbeatTimeoutMs`. */
  heartbeatFailures: number
}

/**
 * Called for each invalidation: the keys that changed, or `null` when everything tracked so far
 * must be dropped (a flush-all message, or tracking was lost). After `null`, the generation has
 * already changed (so entries kept with the old one are no longer valid).
 */
export type InvalidationListener = (keys: readonly string[] | null) => void

/**
 * Server-assisted client-side caching (Redis `CLIENT TRACKING`, default mode, not BCAST) on two
 * connections floodgate owns, never the caller's client: a data connection Redis tracks, and an
 * invalidation connection (RESP2, `__redis__:invalidate`). A value read on {@link connection} may
 * be served from memory while {@link generation} is unchanged, no invalidation named its keys, the
 * invalidation connection was heard within `maxSilenceMs`, and the read was not overtaken in
 * flight ({@link begin}). A cluster client is `unsupported`. Never throws for Redis trouble: it
 * only stops being established. See README.md beside this file (connections, validity, cluster).
 */
export class ClientTracking {
  readonly options: ResolvedClientTrackingOptions
  readonly stats: ClientTrackingStats = {
    establishments: 0,
    losses: 0,
    invalidations: 0,
    invalidatedKeys: 0,
    flushes: 0,
    heartbeatFailures: 0,
  }
  private readonly listeners = new Set<InvalidationListener>()
  private readonly inFlight = new InFlightReads()
  private readonly heartbeatDeadline: Deadline
  private readonly data: Redis | undefined
  private readonly invalidation: Redis | undefined
  private readonly heartbeat: NodeJS.Timeout | undefined
  private currentState: TrackingState = 'connecting'
  private currentGeneration = 1
  private invalidationId: number | undefined
  private dataReady = false
  /** Bumped by every connection event, so an answer to an older attempt is ignored. */
  private attempt = 0
  private establishing = false
  private heartbeatInFlight = false
  /** When the invalidation connection last proved alive (performance.now() ms). */
  private lastHeardMs = 0
  /** Bumped at each `ready` and `close` of the invalidation connection. */
  private invalidationSession = 0

  /** @throws {InvalidArgumentError} for an option out of range. */
  constructor(
    private readonly redis: RedisClient,
    options: ClientTrackingOptions = {},
  ) {
    this.options = resolveClientTrackingOptions(options)
    this.heartbeatDeadline = checkDeadline('heartbeat', {
      timeoutMs: this.options.heartbeatTimeoutMs,
      maxWaitMs: Math.max(2_000, this.options.heartbeatTimeoutMs),
    })
    if (redis.isCluster) {
      this.currentState = 'unsupported'
      return
    }
    const name = this.options.connectionName
    const single = redis as Redis
    // Neither connection may replay a command across a reconnect: the tracking set-up is redone
    // from scratch on each `ready`, and reads are only sent while established.
    const common = {
      lazyConnect: false,
      autoResubscribe: false,
      autoResendUnfulfilledCommands: false,
      enableOfflineQueue: false,
    }
    this.invalidation = single.duplicate({
      ...common,
      enableAutoPipelining: false,
      // RESP3 clients get invalidations as `invalidate` pushes, which ioredis drops; RESP2 ones
      // get them as messages on INVALIDATION_CHANNEL (ioredis 5 speaks RESP2 only)
      protocol: 2,
      connectionName: `${name}:invalidate`,
    })
    this.data = single.duplicate({ ...common, connectionName: `${name}:data` })
    for (const connection of [this.invalidation, this.data]) connection.on('error', () => undefined)
    this.invalidation.on('ready', () => this.onInvalidationReady())
    this.invalidation.on('close', () => this.onInvalidationClosed())
    this.invalidation.on('messageBuffer', (channel: Buffer, message: unknown) =>
      this.onMessage(channel, message),
    )
    this.data.on('ready', () => {
      this.dataReady = true
      this.attempt++
      this.establish()
    })
    this.data.on('close', () => {
      this.dataReady = false
      this.lose()
    })
    this.heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs)
    this.heartbeat.unref()
    redis.once('end', this.onClientEnd)
  }

  get state(): TrackingState {
    return this.currentState
  }

  /**
   * True while Redis tracks the data connection's reads and its invalidations reach this process:
   * set up, and the invalidation connection proved alive less than `maxSilenceMs` ago.
   */
  get established(): boolean {
    return (
      this.currentState === 'established' && performance.now() - this.lastHeardMs <= this.options.maxSilenceMs
    )
  }

  /**
   * True while tracking is expected but not {@link established}: being set up, coming back after
   * a loss, or silent. Values read meanwhile are not tracked; a caller that wants to stay exact
   * asks Redis rather than keep them.
   */
  get recovering(): boolean {
    return this.currentState === 'connecting' || (this.currentState === 'established' && !this.established)
  }

  /**
   * When (`performance.now()` ms) the invalidation connection last proved alive (a pong or a
   * message): every invalidation Redis sent before then has been received. After a loss it stays
   * the last proof of the generation that ended, until tracking is established again.
   */
  get heardAtMs(): number {
    return this.lastHeardMs
  }

  /** Changes whenever tracking is established, lost or flushed: a value kept under another generation is not valid. */
  get generation(): number {
    return this.currentGeneration
  }

  /** The tracked data connection while {@link established}; reads meant to be kept go there. */
  get connection(): Redis | undefined {
    return this.established ? this.data : undefined
  }

  /**
   * Registers a listener of invalidations (see {@link InvalidationListener}).
   * @returns a function that removes it.
   */
  onInvalidate(listener: InvalidationListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /**
   * Starts a read of `keys` on {@link connection}; `undefined` when not established (read on the
   * caller's client then, and keep nothing as tracked). The answer tells, once the reply is in,
   * whether each key may be kept: call `unchanged(key)` and then `end()`.
   */
  begin(keys: readonly string[]): (TrackedRead & { connection: Redis }) | undefined {
    const connection = this.connection
    if (!connection) return undefined
    const read = this.inFlight.begin(keys, this.currentGeneration, () =>
      this.established ? this.currentGeneration : -1,
    )
    return Object.assign(read, { connection })
  }

  /**
   * Resolves true once tracking is established, false after `timeoutMs` ms (or at once when
   * unsupported or closed). For start-up and tests; reads never need to wait for it.
   */
  async whenEstablished(timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs
    while (this.currentState === 'connecting' && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 10))
    return this.established
  }

  /** Closes both connections; idempotent. Everything kept becomes invalid. */
  close(): void {
    if (this.currentState === 'closed') return
    const was = this.currentState
    this.currentState = 'closed'
    if (was === 'established') this.flush()
    clearInterval(this.heartbeat)
    this.redis.off('end', this.onClientEnd)
    this.data?.disconnect()
    this.invalidation?.disconnect()
  }

  private readonly onClientEnd = (): void => this.close()

  private onInvalidationReady(): void {
    const invalidation = this.invalidation!
    const session = ++this.invalidationSession
    invalidation
      .call('CLIENT', 'ID')
      .then(async (id) => {
        await invalidation.subscribe(INVALIDATION_CHANNEL)
        if (session !== this.invalidationSession) return
        this.invalidationId = Number(id)
        this.attempt++
        this.establish()
      })
      .catch((error: unknown) => {
        if (session !== this.invalidationSession || this.currentState === 'closed') return
        if (refused(error)) this.refuse()
        else invalidation.disconnect(true) // set it up again from scratch
      })
  }

  private onInvalidationClosed(): void {
    this.invalidationSession++
    this.invalidationId = undefined
    this.lose()
  }

  /** Turns tracking on for the data connection once both connections are up. */
  private establish(): void {
    if (this.currentState !== 'connecting' || this.establishing) return
    const redirect = this.invalidationId
    if (redirect === undefined || !this.dataReady) return
    const attempt = this.attempt
    this.establishing = true
    this.data!.call('CLIENT', 'TRACKING', 'ON', 'REDIRECT', String(redirect)).then(
      () => {
        this.establishing = false
        if (attempt !== this.attempt || this.currentState !== 'connecting') return this.establish()
        if (this.invalidationId !== redirect || !this.dataReady) return
        this.currentState = 'established'
        this.lastHeardMs = performance.now()
        this.stats.establishments++
        this.currentGeneration++
      },
      (error: unknown) => {
        this.establishing = false
        if (refused(error)) this.refuse()
      },
    )
  }

  /**
   * Redis answered the set-up with an error (Redis < 6, a proxy or managed service without
   * CLIENT TRACKING, an ACL without it): it will not change while the process runs.
   */
  private refuse(): void {
    if (this.currentState === 'closed') return
    this.currentState = 'unsupported'
    clearInterval(this.heartbeat)
    this.data?.disconnect()
    this.invalidation?.disconnect()
  }

  /** A connection closed or stopped answering: nothing kept is valid until tracking is back. */
  private lose(): void {
    this.attempt++
    if (this.currentState !== 'established') return
    this.currentState = 'connecting'
    this.stats.losses++
    this.flush()
  }

  /** Nothing kept so far is valid: a new generation, and every listener hears `null`. */
  private flush(): void {
    this.currentGeneration++
    for (const listener of this.listeners) listener(null)
  }

  private onMessage(channel: Buffer, message: unknown): void {
    if (channel.toString() !== INVALIDATION_CHANNEL) return
    this.lastHeardMs = performance.now()
    this.stats.invalidations++
    const keys = invalidatedKeys(message)
    if (keys === null) {
      this.stats.flushes++
      this.flush()
      return
    }
    this.stats.invalidatedKeys += keys.length
    for (const key of keys) this.inFlight.invalidated(key)
    for (const listener of this.listeners) listener(keys)
  }

  /** Pings the invalidation connection; no pong in time: reconnect it (which drops everything). */
  private beat(): void {
    if (this.currentState === 'connecting') this.establish()
    const invalidation = this.invalidation!
    if (this.heartbeatInFlight || invalidation.status !== 'ready') return
    this.heartbeatInFlight = true
    withinDeadline(invalidation.ping(), this.heartbeatDeadline, 'tracking heartbeat')
      .then(() => {
        this.lastHeardMs = performance.now()
      })
      .catch(() => {
        if (this.currentState === 'closed') return
        this.stats.heartbeatFailures++
        this.lose()
        invalidation.disconnect(true)
      })
      .finally(() => {
        this.heartbeatInFlight = false
      })
  }
}

/**
 * An error reply that will not change by retrying (ERR unknown command / subcommand, NOPERM), as
 * opposed to a lost connection or a passing state (LOADING, BUSY, MASTERDOWN, too many clients).
 */
function refused(error: unknown): boolean {
  return (
    error instanceof Error &&
    error.name === 'ReplyError' &&
    /^(ERR|NOPERM)\b/.test(error.message) &&
    !/max number of clients/i.test(error.message)
  )
}
