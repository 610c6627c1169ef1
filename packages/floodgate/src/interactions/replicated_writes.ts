import { Command, Redis, type RedisOptions } from 'ioredis'
import { ScriptContractError, StoreUnavailableError } from '../errors/index.js'
import type { LuaScript } from '../redis/lua_script.js'
import { isCluster, type RedisClient } from '../redis/types.js'
import { REPLICATED_WRITE_DEFAULTS } from './defaults.js'
import { ReplicationTimeoutError } from './errors.js'
import {
  isCommandTimeout,
  isConnectionError,
  movedTarget,
  type Refusal,
  refusedBeforeRun,
} from './node_replies.js'
import type { WaitForReplicas } from './options.js'
import { writeCapMs } from './resent_write.js'

/** One write step waiting for its node's next batch. */
interface PendingWrite {
  script: LuaScript
  keys: readonly string[]
  args: readonly (string | number)[]
  /** Epoch ms after which a write refused before it ran is no longer retried. */
  deadline: number
  /** Epoch ms when the caller asked for the write: its WAIT budget (timeoutMs) runs from here. */
  queuedAt: number
  /** `host:port` a MOVED named: where the next attempt goes, whatever the slot map says. */
  movedTo?: string
  resolve(reply: unknown): void
  reject(error: unknown): void
}

/** The writes of one node (a cluster master, or the single node) and their own connection. */
interface Lane {
  address: string
  connection: Redis
  /** SHA1s this connection's server has cached since it connected (SCRIPT LOAD answered). */
  loaded: Set<string>
  /**
   * SHA1s whose SCRIPT LOAD this connection's server refused (an ACL without `script|load`, a
   * renamed SCRIPT): sent as EVAL of the source instead, so a NOSCRIPT is not resent forever.
   */
  evalOnly: Set<string>
  queue: PendingWrite[]
  busy: boolean
  /**
   * A connection to this node failed, or it refused WAIT (no longer a master), since its last
   * answered WAIT: the node is down, restarted or demoted, so its CLUSTERDOWN is no cluster-wide
   * pause to wait out (see {@link ReplicatedWrites}).
   */
  failing: boolean
  /** Epoch ms before which no new connection to this node is opened (ms after its last failure). */
  reconnectAt: number
  /** Why the last connection failed: the answer of writes refused while reconnecting waits. */
  lastError?: Error
}

/**
 * The `waitForReplicas` write path: per node, one connection of its own and one batch in flight,
 * sent as one pipeline `[SCRIPT LOAD … (first use on that connection), EVALSHA …, WAIT n t]`.
 *
 * Why not a script + WAIT pipeline per write on one shared connection (the earlier design): WAIT
 * blocks its connection, so with a node's replicas gone every queued write waited `timeoutMs` per
 * write ahead of it, a NOSCRIPT reload (a promoted replica has no script cache) queued behind them
 * and timed out, and replacing the connection after that timeout cut the writes of every other
 * node too (issue 29). Here one WAIT confirms a whole batch; writes that arrive meanwhile wait
 * for it, and if it fell short they are refused without running (the node has too few replicas
 * now); a batch's WAIT gets only what is left of its oldest write's `timeoutMs` (at least
 * `minWaitFraction` of it), so a write answers within about `timeoutMs` of its call. A command timeout closes only that node's
 * connection (its queued commands are then dropped by Redis, never run after their caller was
 * told they failed). A write Redis refused before running it is sent again until the client's
 * command timeout has passed: NOSCRIPT at once (the scripts loaded first; sent as EVAL where the
 * server refuses SCRIPT LOAD), MOVED to the node it names (through the client's natMap), ASK,
 * CLUSTERDOWN and TRYAGAIN after a 100 ms pause (a cluster refuses every command from a master's
 * failure to its replica's promotion).
 *
 * That CLUSTERDOWN pause is waited out to the cap only on a node that is a healthy master (its last
 * WAIT answered): there the write will run once the failed shard's replica is promoted. A node whose
 * connection failed or whose WAIT was refused since (the failed master itself, restarted at its
 * address and answering CLUSTERDOWN or MOVED until it has rejoined as a replica) will not run the
 * write, so there a write is resent only while its `timeoutMs` lasts and is then refused with
 * StoreUnavailableError: the failed shard answers within about `timeoutMs`, as its WAIT would.
 * After a failed connection a node is not reconnected for `reconnectPauseMs` (writes meanwhile
 * are refused unsent), and lanes of nodes the slot map no longer names as masters are closed.
 */
export class ReplicatedWrites {
  private readonly redis: RedisClient
  private readonly wait: WaitForReplicas
  private readonly lanes = new Map<string, Lane>()
  /** How long a write refused before it ran (CLUSTERDOWN, MOVED…) may be retried (ms): the command cap. */
  private readonly capMs: number
  private refreshing: Promise<void> | undefined
  private closed = false

  constructor(redis: RedisClient, wait: WaitForReplicas) {
    this.redis = redis
    this.wait = wait
    this.capMs = writeCapMs(redis)
  }

  /** Closes every node connection; queued writes fail with StoreUnavailableError. Idempotent. */
  close(): void {
    this.closed = true
    for (const lane of this.lanes.values()) {
      lane.connection.disconnect()
      for (const w of lane.queue.splice(0)) w.reject(new StoreUnavailableError('interaction writes closed'))
    }
    this.lanes.clear()
  }

  /**
   * Runs `script` on the node serving `keys` and waits for its replicas; resolves with the
   * script's reply once `wait.replicas` confirmed it.
   * @throws {ReplicationTimeoutError} when fewer confirmed within `wait.timeoutMs` (the write ran),
   *   or when an earlier write's WAIT on that node had just fallen short (the write did not run).
   * @throws {StoreUnavailableError} when Redis failed, or refused it until the command cap passed
   *   (until `wait.timeoutMs` passed, on a node that is down or restarted: see the class).
   */
  write(script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const now = Date.now()
      this.enqueue({ script, keys, args, deadline: now + this.capMs, queuedAt: now, resolve, reject })
    })
  }

  private enqueue(write: PendingWrite, front = false): void {
    if (this.closed) {
      write.reject(new StoreUnavailableError('interaction writes closed'))
      return
    }
    const address = this.addressOf(write)
    if (address === undefined) {
      write.reject(new StoreUnavailableError('no Redis Cluster master known for the write'))
      void this.refreshSlots()
      return
    }
    const lane = this.lane(address)
    if (front) lane.queue.unshift(write)
    else lane.queue.push(write)
    // writes of the same tick share one batch
    if (lane.queue.length === 1) queueMicrotask(() => this.pump(lane))
  }

  /** `host:port` of the master serving the write's slot (the cluster client's slot map), or `single`. */
  private addressOf(write: PendingWrite): string | undefined {
    if (!isCluster(this.redis)) return 'single'
    if (write.movedTo !== undefined) return write.movedTo
    const slot = scriptCommand(write, this.redis).getSlot()
    return this.redis.slots[slot]?.[0]
  }

  private lane(address: string): Lane {
    let lane = this.lanes.get(address)
    if (!lane) {
      lane = {
        address,
        connection: this.connect(address),
        loaded: new Set(),
        evalOnly: new Set(),
        queue: [],
        busy: false,
        failing: false,
        reconnectAt: 0,
      }
      this.lanes.set(address, lane)
    }
    return lane
  }

  /** Gives `lane` a new connection, whose server may lack the scripts. */
  private reconnect(lane: Lane): void {
    lane.connection = this.connect(lane.address)
    lane.loaded.clear()
    lane.evalOnly.clear()
  }

  /**
   * A connection to one node that queues commands while it connects and never reconnects (a new
   * one is opened for the next batch): a reconnected server may have lost its script cache.
   */
  private connect(address: string): Redis {
    const own: RedisOptions = {
      enableOfflineQueue: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      lazyConnect: false,
    }
    let connection: Redis
    if (isCluster(this.redis)) {
      const [host, port] = splitAddress(address)
      connection = new Redis({ ...this.redis.options.redisOptions, host, port, ...own })
    } else {
      connection = this.redis.duplicate(own)
    }
    connection.on('error', () => {}) // each failed command rejects its write
    return connection
  }

  private pump(lane: Lane): void {
    if (lane.busy || lane.queue.length === 0 || this.closed) return
    lane.busy = true
    const batch = lane.queue.splice(0, REPLICATED_WRITE_DEFAULTS.batchMax)
    void this.send(lane, batch).finally(() => {
      lane.busy = false
      this.pump(lane)
    })
  }

  private async send(lane: Lane, batch: PendingWrite[]): Promise<void> {
    if (lane.connection.status === 'end' || lane.connection.status === 'close') {
      if (Date.now() < lane.reconnectAt) {
        // its last connection failed a moment ago: refuse unsent rather than connect per batch
        const cause = lane.lastError ?? new Error('Connection is closed.')
        for (const write of batch) write.reject(toStoreError(write.script.name, cause))
        void this.refreshSlots()
        return
      }
      this.reconnect(lane)
    }
    const connection = lane.connection
    const pipeline = connection.pipeline() as unknown as {
      sendCommand(command: Command): unknown
      exec(): Promise<[Error | null, unknown][] | null>
    }
    const loading = [...new Set(batch.map((w) => w.script))].filter(
      (s) => !lane.loaded.has(s.sha1) && !lane.evalOnly.has(s.sha1),
    )
    for (const script of loading) pipeline.sendCommand(new Command('script', ['LOAD', script.source]))
    for (const write of batch)
      pipeline.sendCommand(scriptCommand(write, this.redis, lane.evalOnly.has(write.script.sha1)))
    pipeline.sendCommand(
      new Command('wait', [this.wait.replicas, this.waitBudgetMs(batch)], { replyEncoding: 'utf8' }),
    )
    let results: [Error | null, unknown][]
    try {
      results = (await pipeline.exec()) ?? []
    } catch (error) {
      results = []
      for (let i = 0; i < loading.length + batch.length + 1; i++) results.push([error as Error, undefined])
    }
    loading.forEach((script, i) => {
      const error = results[i]?.[0]
      if (!error) lane.loaded.add(script.sha1)
      else if (error.name === 'ReplyError' && !/^(LOADING|BUSY)/.test(error.message))
        lane.evalOnly.add(script.sha1) // refused for good (NOPERM, unknown command), not lost
    })
    const [waitError, acknowledged] = results[loading.length + batch.length] ?? [new Error('no WAIT reply')]
    if (results.some(([error]) => isCommandTimeout(error))) {
      // commands of this batch may still be queued in Redis: closing drops them unrun; the next
      // batch goes on a new connection (this one only reaches `end` once its socket has closed)
      if (lane.connection === connection) this.reconnect(lane)
      connection.disconnect()
    }
    const short = waitError === null && typeof acknowledged === 'number' && acknowledged < this.wait.replicas
    const connectionError = results.find(([error]) => error !== null && isConnectionError(error))?.[0]
    if (connectionError) {
      // a blip on a serving node reconnects at once; a second failure before an answered WAIT
      // (the node is down) pauses, instead of one refused connect per batch
      if (lane.failing) lane.reconnectAt = Date.now() + REPLICATED_WRITE_DEFAULTS.reconnectPauseMs
      lane.failing = true
      lane.lastError = connectionError
    } else if (waitError)
      lane.failing = true // e.g. a replica's "WAIT cannot be used with replica instances"
    else if (typeof acknowledged === 'number') lane.failing = false
    const again: PendingWrite[] = []
    const later: PendingWrite[] = []
    let moved = false
    let lost = false
    batch.forEach((write, i) => {
      const [error, reply] = results[loading.length + i] ?? [new Error('no reply')]
      if (error) {
        const refused = refusedBeforeRun(error)
        if (refused === 'noscript') lane.loaded.delete(write.script.sha1)
        if (refused === 'moved') {
          // the redirect names the node serving the slot now; a refreshed map may still be stale
          // (a node that has not heard of the promotion, or the restarted old master)
          write.movedTo = this.natMapped(movedTarget(error.message))
          moved = true
        }
        if (refused !== undefined && Date.now() < this.retryDeadline(lane, write, refused)) {
          if (short)
            write.reject(
              new ReplicationTimeoutError(acknowledged as number, this.wait.replicas, this.wait.timeoutMs),
            )
          else if (refused === 'down' || (refused === 'moved' && write.movedTo === undefined))
            later.push(write)
          else again.push(write)
          return
        }
        if (isConnectionError(error)) lost = true
        write.reject(toStoreError(write.script.name, error))
      } else if (waitError) {
        write.reject(toStoreError('WAIT', waitError))
      } else if (typeof acknowledged !== 'number') {
        write.reject(new ScriptContractError('WAIT', acknowledged))
      } else if (short) {
        write.reject(new ReplicationTimeoutError(acknowledged, this.wait.replicas, this.wait.timeoutMs))
      } else {
        write.resolve(reply)
      }
    })
    if (short) {
      // too few replicas now: what queued behind this WAIT would wait as long; refuse it unrun
      const error = new ReplicationTimeoutError(
        acknowledged as number,
        this.wait.replicas,
        this.wait.timeoutMs,
      )
      for (const write of lane.queue.splice(0)) write.reject(error)
    }
    for (const write of again.reverse()) this.enqueue(write, true)
    // in the background, never holding the lane: with a dead node in the map a refresh can take
    // the client's slotsRefreshTimeout (1 s) per attempt, and the writes queued here would wait
    if (moved || lost) void this.refreshSlots()
    if (later.length > 0) {
      setTimeout(() => {
        void this.refreshSlots() // the promoted replica serves the failed master's slots
        for (const write of later) this.enqueue(write)
      }, REPLICATED_WRITE_DEFAULTS.clusterDownRetryMs).unref()
    }
  }

  /**
   * Epoch ms until which a write `refused` before it ran may be sent again. A CLUSTERDOWN or
   * TRYAGAIN from a failing node: while a resend (after clusterDownRetryMs, with at least the
   * smallest WAIT) still ends within the write's `timeoutMs`; anything else: the command cap.
   */
  private retryDeadline(lane: Lane, write: PendingWrite, refused: Refusal): number {
    if (refused !== 'down' || !lane.failing) return write.deadline
    const { clusterDownRetryMs, minWaitFraction } = REPLICATED_WRITE_DEFAULTS
    const resendCostMs = clusterDownRetryMs + Math.ceil(this.wait.timeoutMs * minWaitFraction)
    return Math.min(write.deadline, write.queuedAt + this.wait.timeoutMs - resendCostMs)
  }

  /**
   * The batch's WAIT timeout (ms, integer >= 1): what is left of its oldest write's
   * `wait.timeoutMs` since the caller asked, so a write queued behind a slow batch or a CLUSTERDOWN
   * retry still answers within about timeoutMs; at least minWaitFraction of it.
   */
  private waitBudgetMs(batch: readonly PendingWrite[]): number {
    let oldest = Number.POSITIVE_INFINITY
    for (const write of batch) oldest = Math.min(oldest, write.queuedAt)
    const { timeoutMs } = this.wait
    const floor = Math.ceil(timeoutMs * REPLICATED_WRITE_DEFAULTS.minWaitFraction)
    return Math.max(1, floor, Math.round(timeoutMs - (Date.now() - oldest)))
  }

  /**
   * `address` (a redirect's `host:port`, as the node announces itself) through the cluster
   * client's `natMap`, as ioredis maps its own redirects: behind NAT only the mapped one is
   * reachable, and it is the form the slot map (hence the lanes) uses.
   */
  private natMapped(address: string | undefined): string | undefined {
    if (address === undefined || !isCluster(this.redis)) return address
    const natMap = this.redis.options.natMap
    const mapped = typeof natMap === 'function' ? natMap(address) : natMap?.[address]
    return mapped ? `${mapped.host}:${mapped.port}` : address
  }

  /** Refreshes the cluster client's slot map (one refresh at a time); a no-op on a single node. */
  private refreshSlots(): Promise<void> {
    const redis = this.redis
    if (!isCluster(redis)) return Promise.resolve()
    this.refreshing ??= new Promise<void>((resolve) => redis.refreshSlotsCache(() => resolve())).finally(
      () => {
        this.refreshing = undefined
        this.pruneLanes()
      },
    )
    return this.refreshing
  }

  /** Closes idle lanes of nodes the slot map no longer names as a master (a failed, demoted one). */
  private pruneLanes(): void {
    if (!isCluster(this.redis) || this.closed) return
    const masters = new Set<string>()
    for (const nodes of this.redis.slots) if (nodes?.[0] !== undefined) masters.add(nodes[0])
    if (masters.size === 0) return // no map (every node unreachable): keep what there is
    for (const [address, lane] of this.lanes) {
      if (masters.has(address) || lane.busy || lane.queue.length > 0) continue
      lane.connection.disconnect()
      this.lanes.delete(address)
    }
  }
}

/** EVALSHA (or EVAL of the source) of the write, with the client's key prefix (which also picks its slot). */
function scriptCommand(write: PendingWrite, client: RedisClient, evalSource = false): Command {
  const script = evalSource ? write.script.source : write.script.sha1
  return new Command(
    evalSource ? 'eval' : 'evalsha',
    [script, write.keys.length, ...write.keys, ...write.args],
    {
      replyEncoding: 'utf8',
      keyPrefix: client.options.keyPrefix,
    },
  )
}

function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(':')
  return [address.slice(0, at), Number(address.slice(at + 1))]
}

function toStoreError(what: string, error: unknown): StoreUnavailableError {
  const message = error instanceof Error ? error.message : String(error)
  return new StoreUnavailableError(`Redis ${what} failed: ${message}`, { cause: error })
}
