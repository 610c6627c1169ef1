import type { RedisClient } from '../../redis/index.js'
import { type BusSubscription, pubSubBusOf } from '../../redis/pubsub_bus.js'

/** Message on the invalidation channel: which keys to drop from L1, and who sent it. */
export interface InvalidationMessage {
  from: string
  keys: string[]
}

/** Message on the invalidation channel: a namespace was cleared and now has `generation`. */
export interface ClearMessage {
  from: string
  namespace: string
  generation: number
}

/** Callbacks of {@link CacheBus}. */
export interface CacheBusHandlers {
  /** A fill published a wake-up for `key`. */
  onFilled(key: string): void
  /** Another instance (or this one) invalidated `keys`. */
  onInvalidated(message: InvalidationMessage): void
  /** Another instance (or this one) cleared a namespace. */
  onCleared(message: ClearMessage): void
  /**
   * The channels are subscribed (the first time and after each loss): a wake-up published before
   * did not arrive. `afterLoss`: the connection had dropped, or the first SUBSCRIBE failed, so
   * invalidations may have been missed too.
   */
  onSubscribed(afterLoss: boolean): void
  /** The subscriber connection dropped: no wake-up or invalidation arrives until `onSubscribed`. */
  onLost(): void
}

/**
 * A cache's hold on its client's shared pub/sub connection ({@link pubSubBusOf}: one per client,
 * however many caches), listening on the wake-up and the invalidation channels.
 */
export class CacheBus {
  private readonly subscription: BusSubscription

  constructor(redis: RedisClient, wakeChannel: string, busChannel: string, handlers: CacheBusHandlers) {
    this.subscription = pubSubBusOf(redis).subscribe([wakeChannel, busChannel], {
      onMessage: (channel, message) => {
        if (channel === wakeChannel) handlers.onFilled(message.toString('utf8'))
        else if (channel === busChannel) {
          try {
            const parsed = JSON.parse(message.toString('utf8')) as Partial<InvalidationMessage & ClearMessage>
            if (Array.isArray(parsed.keys)) handlers.onInvalidated(parsed as InvalidationMessage)
            else if (typeof parsed.namespace === 'string' && Number.isInteger(parsed.generation))
              handlers.onCleared(parsed as ClearMessage)
          } catch {
            // not ours; ignore
          }
        }
      },
      onSubscribed: (afterLoss) => handlers.onSubscribed(afterLoss),
      onLost: () => handlers.onLost(),
    })
    this.ready = this.subscription.ready
  }

  /** Resolves once both channels are subscribed for the first time. */
  readonly ready: Promise<void>

  /** True while a wake-up or an invalidation published now reaches this cache (see {@link BusSubscription.live}). */
  get live(): boolean {
    return this.subscription.live
  }

  /** Leaves the shared connection (closed with its last subscriber). */
  close(): void {
    this.subscription.close()
  }
}
