import type { Cluster, Redis } from 'ioredis'
import { openSubscriberConnection } from './dedicated_connection.js'
import type { RedisClient } from './types.js'

/** Receives the messages of the channels it subscribed to (raw bytes). */
export type ChannelHandler = (channel: string, message: Buffer) => void

/** What one subscriber of the bus hears. */
export interface BusListener {
  /** A message on one of its channels. */
  onMessage: ChannelHandler
  /**
   * Its channels are subscribed on the current connection: the first time, and again after each
   * loss. `afterLoss`: the connection dropped (or a SUBSCRIBE failed) since they were last
   * subscribed (or, the first time, since {@link PubSubBus.subscribe}), so messages published
   * meanwhile were not received; false the first time nothing failed on the way.
   */
  onSubscribed?(afterLoss: boolean): void
  /** The connection dropped: nothing published from now on arrives until the next `onSubscribed`. */
  onLost?(): void
}

/** One subscriber's hold on the bus. */
export interface BusSubscription {
  /** Settles once its channels are subscribed for the first time; never rejects (the bus keeps trying). */
  readonly ready: Promise<void>
  /**
   * True while every one of its channels is subscribed on the connection, which is up: a message
   * published now reaches the subscriber. False before the first SUBSCRIBE was answered, while
   * the connection is down, and after `close()`.
   */
  readonly live: boolean
  /** Leaves the bus; the last one out closes the shared connection. Idempotent. */
  close(): void
}

/** A subscription as the bus keeps it. */
interface Member {
  readonly channels: readonly string[]
  readonly listener: BusListener
  live: boolean
  /** Messages may have been missed since it was last live (or since it joined). */
  missed: boolean
  left: boolean
  resolveReady(): void
}

const buses = new WeakMap<RedisClient, PubSubBus>()

/** The {@link PubSubBus} of `redis`: one per client, made on first use (again after it closed). */
export function pubSubBusOf(redis: RedisClient): PubSubBus {
  let bus = buses.get(redis)
  if (!bus || bus.isClosed) {
    bus = new PubSubBus(redis)
    buses.set(redis, bus)
  }
  return bus
}

/**
 * The one pub/sub subscriber connection floodgate opens per client (a `duplicate()`), shared by
 * every cache on that client. It closes when the last subscription closes or when the client
 * itself ends (`quit()`/`disconnect()`), so a process exits after `redis.quit()`.
 *
 * A channel counts as subscribed only once its SUBSCRIBE is answered on the connection that is up
 * now. Every `ready` of the connection, the first one included, sends SUBSCRIBE for the channels
 * that are not: a SUBSCRIBE queued while the first connect failed (a connect timeout on a loaded
 * process, a refused connection) is rejected by the client (no retries per request) and would
 * otherwise never be sent again. Each subscription hears when its channels become subscribed and
 * when the connection drops ({@link BusListener}), and tells whether a message published now
 * would reach it ({@link BusSubscription.live}).
 */
export class PubSubBus {
  private readonly subscriber: Redis | Cluster
  private readonly members = new Map<string, Set<Member>>()
  /** Channels whose SUBSCRIBE was answered on the current connection. */
  private readonly confirmed = new Set<string>()
  /** Bumped at each `close` of the connection: an answer to an older SUBSCRIBE confirms nothing. */
  private connection = 0
  private closed = false

  constructor(private readonly redis: RedisClient) {
    this.subscriber = openSubscriberConnection(redis)
    this.subscriber.on('ready', () => this.subscribeMissing())
    this.subscriber.on('close', () => this.lost())
    this.subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => {
      const name = channel.toString()
      for (const member of this.members.get(name) ?? []) member.listener.onMessage(name, message)
    })
    redis.once('end', this.onClientEnd)
  }

  get isClosed(): boolean {
    return this.closed
  }

  /** Subscribes `listener` to `channels` (SUBSCRIBE only for channels not subscribed here yet). */
  subscribe(channels: readonly string[], listener: BusListener): BusSubscription {
    let resolveReady!: () => void
    const ready = new Promise<void>((resolve) => {
      resolveReady = resolve
    })
    const member: Member = { channels, listener, live: false, missed: false, left: false, resolveReady }
    for (const channel of channels) {
      let set = this.members.get(channel)
      if (!set) {
        set = new Set()
        this.members.set(channel, set)
      }
      set.add(member)
    }
    if (this.subscriber.status === 'ready') this.subscribeMissing()
    // channels another subscription holds already may make it live now: tell it after this returns
    queueMicrotask(() => this.notify())
    return {
      ready,
      get live() {
        return member.live
      },
      close: () => this.leave(member),
    }
  }

  /** Sends SUBSCRIBE for every channel with members that is not subscribed on this connection. */
  private subscribeMissing(): void {
    if (this.closed) return
    const missing = [...this.members.keys()].filter((channel) => !this.confirmed.has(channel))
    if (missing.length === 0) return
    const connection = this.connection
    // a rejection (the connection dropped) is answered by the next `ready`, which sends it again
    this.subscriber.subscribe(...missing).then(
      () => {
        if (connection !== this.connection || this.closed) return
        for (const channel of missing) if (this.members.has(channel)) this.confirmed.add(channel)
        this.notify()
      },
      () => {
        for (const channel of missing)
          for (const member of this.members.get(channel) ?? []) member.missed = true
      },
    )
  }

  /** Marks live, and tells, every member whose channels are all subscribed now. */
  private notify(): void {
    for (const member of this.allMembers()) {
      if (member.live || member.left || !member.channels.every((c) => this.confirmed.has(c))) continue
      member.live = true
      const afterLoss = member.missed
      member.missed = false
      member.resolveReady()
      member.listener.onSubscribed?.(afterLoss)
    }
  }

  /** The connection dropped (or a connect attempt failed): nothing is subscribed until the next `ready`. */
  private lost(): void {
    this.connection++
    this.confirmed.clear()
    for (const member of this.allMembers()) {
      member.missed = true
      if (!member.live) continue
      member.live = false
      member.listener.onLost?.()
    }
  }

  private allMembers(): Set<Member> {
    const all = new Set<Member>()
    for (const set of this.members.values()) for (const member of set) all.add(member)
    return all
  }

  private leave(member: Member): void {
    if (member.left) return
    member.left = true
    member.live = false
    const empty: string[] = []
    for (const channel of member.channels) {
      const set = this.members.get(channel)
      set?.delete(member)
      if (set?.size === 0) {
        this.members.delete(channel)
        this.confirmed.delete(channel)
        empty.push(channel)
      }
    }
    if (this.members.size === 0) this.close()
    else if (empty.length > 0) this.subscriber.unsubscribe(...empty).catch(() => undefined)
  }

  private readonly onClientEnd = (): void => this.close()

  private close(): void {
    if (this.closed) return
    this.closed = true
    this.redis.off('end', this.onClientEnd)
    this.subscriber.disconnect()
  }
}
