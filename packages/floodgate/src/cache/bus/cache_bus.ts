import { Cluster, type Redis } from 'ioredis'
import type { RedisClient } from '../../redis/index.js'

/** Message on the invalidation channel: which keys to drop from L1, and who sent it. */
export interface InvalidationMessage {
  from: string
  keys: string[]
}

/** Callbacks of {@link CacheBus}. */
export interface CacheBusHandlers {
  /** A fill published a wake-up for `key`. */
  onFilled(key: string): void
  /** Another instance (or this one) invalidated `keys`. */
  onInvalidated(message: InvalidationMessage): void
  /** The subscriber connection came back after a drop: messages may have been missed. */
  onReconnected(): void
}

/**
 * The one pub/sub subscriber connection of a cache (a `duplicate()` of its
 * client), listening on the wake-up and the invalidation channels.
 * ioredis re-subscribes by itself after a reconnect; every `ready` after the
 * first is reported through `onReconnected`, because anything published while
 * the connection was down is lost.
 */
export class CacheBus {
  private readonly subscriber: Redis | Cluster
  private connectedOnce = false
  private closed = false

  constructor(
    redis: RedisClient,
    private readonly wakeChannel: string,
    private readonly busChannel: string,
    handlers: CacheBusHandlers,
  ) {
    // The subscriber needs an offline queue (its SUBSCRIBE may be sent before it connects)
    // and no command timeout (a subscribed connection has no replies to time).
    this.subscriber =
      redis instanceof Cluster
        ? redis.duplicate(undefined, {
            enableOfflineQueue: true,
            redisOptions: { commandTimeout: undefined },
          })
        : redis.duplicate({ enableOfflineQueue: true, commandTimeout: undefined, lazyConnect: false })
    this.subscriber.on('error', () => {})
    this.subscriber.on('ready', () => {
      if (this.connectedOnce) handlers.onReconnected()
      this.connectedOnce = true
    })
    this.subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => {
      const name = channel.toString()
      if (name === this.wakeChannel) handlers.onFilled(message.toString('utf8'))
      else if (name === this.busChannel) {
        try {
          const parsed = JSON.parse(message.toString('utf8')) as InvalidationMessage
          if (Array.isArray(parsed.keys)) handlers.onInvalidated(parsed)
        } catch {
          // not ours; ignore
        }
      }
    })
    this.ready = this.subscriber.subscribe(this.wakeChannel, this.busChannel).then(
      () => undefined,
      () => undefined,
    )
  }

  /** Resolves once the first SUBSCRIBE was answered (or failed). */
  readonly ready: Promise<void>

  /** Closes the subscriber connection. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.subscriber.disconnect()
  }
}
