import type { Cluster, Redis } from 'ioredis'
import { openSubscriberConnection } from './dedicated_connection.js'
import { isCluster, type RedisClient } from './types.js'

/** Receives the messages of the channels it subscribed to (raw bytes). */
export type ChannelHandler = (channel: string, message: Buffer) => void

/** One subscriber's hold on the bus; `ready` settles once its SUBSCRIBE was answered (or failed). */
export interface BusSubscription {
  readonly ready: Promise<void>
  /** Leaves the bus; the last one out closes the shared connection. Idempotent. */
  close(): void
}

const buses = new WeakMap<RedisClient, PubSubBus>()

/**
 * The one pub/sub subscriber connection floodgate opens per client (a `duplicate()`), shared by
 * every cache on that client. It closes when the last subscription closes or when the client
 * itself ends (`quit()`/`disconnect()`), so a process exits after `redis.quit()`.
 * It re-subscribes its channels after a reconnect (failures ignored: the next reconnect tries
 * again); each `ready` after the first is passed to `onReconnected` (anything published while the
 * connection was down is lost).
 */
export function pubSubBusOf(redis: RedisClient): PubSubBus {
  let bus = buses.get(redis)
  if (!bus || bus.isClosed) {
    bus = new PubSubBus(redis)
    buses.set(redis, bus)
  }
  return bus
}

export class PubSubBus {
  private readonly subscriber: Redis | Cluster
  private readonly handlers = new Map<string, Set<ChannelHandler>>()
  /** Per channel, the answer to its SUBSCRIBE (settled, never rejected). */
  private readonly subscribed = new Map<string, Promise<void>>()
  private readonly reconnectListeners = new Set<() => void>()
  private connectedOnce = false
  private closed = false

  constructor(private readonly redis: RedisClient) {
    this.subscriber = openSubscriberConnection(redis)
    this.subscriber.on('ready', () => {
      if (this.connectedOnce) {
        this.resubscribe()
        for (const listener of [...this.reconnectListeners]) listener()
      }
      this.connectedOnce = true
    })
    this.subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => {
      const name = channel.toString()
      for (const handler of this.handlers.get(name) ?? []) handler(name, message)
    })
    redis.once('end', this.onClientEnd)
  }

  get isClosed(): boolean {
    return this.closed
  }

  /**
   * Subscribes `handler` to `channels` (SUBSCRIBE only for channels nobody here listens to yet).
   * @param onReconnected called after each reconnect of the shared connection.
   */
  subscribe(
    channels: readonly string[],
    handler: ChannelHandler,
    onReconnected: () => void,
  ): BusSubscription {
    const fresh = channels.filter((channel) => !this.handlers.has(channel))
    if (fresh.length > 0) {
      const answered = this.subscriber.subscribe(...fresh).then(
        () => undefined,
        () => undefined,
      )
      for (const channel of fresh) this.subscribed.set(channel, answered)
    }
    for (const channel of channels) {
      let set = this.handlers.get(channel)
      if (!set) {
        set = new Set()
        this.handlers.set(channel, set)
      }
      set.add(handler)
    }
    this.reconnectListeners.add(onReconnected)
    const ready = Promise.all(channels.map((channel) => this.subscribed.get(channel))).then(() => undefined)
    let left = false
    return {
      ready,
      close: () => {
        if (left) return
        left = true
        this.leave(channels, handler, onReconnected)
      },
    }
  }

  private leave(channels: readonly string[], handler: ChannelHandler, onReconnected: () => void): void {
    this.reconnectListeners.delete(onReconnected)
    const empty: string[] = []
    for (const channel of channels) {
      const set = this.handlers.get(channel)
      set?.delete(handler)
      if (set?.size === 0) {
        this.handlers.delete(channel)
        this.subscribed.delete(channel)
        empty.push(channel)
      }
    }
    if (this.handlers.size === 0) this.close()
    else if (empty.length > 0) this.subscriber.unsubscribe(...empty).catch(() => undefined)
  }

  private readonly onClientEnd = (): void => this.close()

  private resubscribe(): void {
    // a Cluster's subscriber re-subscribes by itself (see openDedicatedConnection)
    if (this.closed || this.handlers.size === 0 || isCluster(this.subscriber)) return
    this.subscriber.subscribe(...this.handlers.keys()).catch(() => undefined)
  }

  private close(): void {
    if (this.closed) return
    this.closed = true
    this.redis.off('end', this.onClientEnd)
    this.subscriber.disconnect()
  }
}
