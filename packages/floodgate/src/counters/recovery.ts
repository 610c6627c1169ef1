import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { canonicalId } from '../interactions/ids.js'
import { InteractionKeys } from '../interactions/keys.js'
import { interactionLayout } from '../interactions/layout.js'
import { existingPartitions, LEGACY_DRAIN_DEFAULTS } from '../interactions/legacy_drain.js'
import { LegacyInteractionKeys } from '../interactions/legacy_layout.js'
import { type InteractionTablesOptions, type QuotedTables, quoteTables } from '../interactions/tables.js'
import { type Lease, Mutex } from '../lock/index.js'
import { type Logger, logError } from '../observability/index.js'
import type { RedisClient } from '../redis/index.js'
import type { SqlExecutor } from '../sql/executor.js'
import { integerIn } from '../validation/index.js'
import { RebuildAbortedError } from './errors.js'
import { type RebuildMode, type RebuildReport, rebuildFromDatabase, restoreOneItem } from './rebuild.js'
import { type ReconcileReport, reconcileCounts } from './reconcile.js'
import { RECOVERY_DEFAULTS } from './recovery_defaults.js'
import { rebuildLockKey } from './recovery_keys.js'
import { commitEpochReply, commitEpochScript } from './scripts.js'

/** `unknown` before the first check; `ready` while Redis counts may be served; `rebuilding` while they may not. */
export type RecoveryState = 'unknown' | 'ready' | 'rebuilding'

/** What the recovery monitor tells its observer (for logs and metrics). */
export type RecoveryEvent =
  | { type: 'epoch-missing' }
  | { type: 'legacy-draining'; streams: number }
  | { type: 'rebuild-started'; mode: RebuildMode }
  | { type: 'rebuilt'; report: RebuildReport; epoch: string }
  | { type: 'rebuild-aborted'; error: unknown }
  | { type: 'error'; phase: 'check' | 'rebuild'; error: unknown }

/** Options of {@link CountsRecovery}. */
export interface CountsRecoveryOptions {
  redis: RedisClient
  /** PostgreSQL, the source of truth. */
  sql: SqlExecutor
  /** Key prefix (e.g. `va`). */
  prefix: string
  /** Must match the write path. @default 300 (`INTERACTION_DEFAULTS.partitions`) */
  partitions?: number
  /** Entries kept per partition in the all-time ranking ZSETs; must match the write path. @default 1000 */
  topK?: number
  /** Tables and columns, as given to the flush. @default {@link defaultInteractionTables} */
  tables?: InteractionTablesOptions
  /** How often the epoch marker is checked (ms). @default 5000 */
  checkIntervalMs?: number
  /** Rows per keyset page of the rebuild (rows). @default 2000 (`RECOVERY_DEFAULTS.chunkSize`) */
  chunkSize?: number
  /**
   * Most restore steps (Lua calls) of a rebuild awaiting their reply at once (calls): the request
   * path's commands on the same Redis wait behind at most this many.
   * @default 16 (`RECOVERY_DEFAULTS.stepsInFlight`)
   */
  stepsInFlight?: number
  /** Rebuild lock TTL (ms); renewed by a watchdog every third of it while the rebuild runs. @default 10000 */
  lockTtlMs?: number
  /** Observer of checks and rebuilds. */
  onEvent?: (event: RecoveryEvent) => void
  /**
   * Where recovery logs (see {@link Logger}): the epoch marker missing (warn: counters are being
   * rebuilt), a failed check (warn), an aborted rebuild (error). @default none
   */
  logger?: Logger
}

/** Outcome of {@link CountsRecovery.rebuild}; `not-needed`: a rebuild a failed check started found the marker back (another instance rebuilt it). */
export type RebuildOutcome =
  | { rebuilt: true; report: RebuildReport; epoch: string }
  | { rebuilt: false; reason: 'locked' | 'aborted' | 'not-needed'; error?: unknown }

/**
 * Detects that Redis lost its data and rebuilds it from PostgreSQL (README.md beside this
 * file, "Detecting a loss" and "Rebuild").
 *
 * The marker `<prefix>:epoch` holds a random id, set when a rebuild completes.
 * Redis restarted without persistence, failed over to a replica that never got
 * it, or was flushed: the marker is gone. Every instance checks it at start and
 * every `checkIntervalMs` (and at once when a read finds it missing); when it is
 * missing the instance stops serving Redis counts (`serving()` is false, so the
 * service serves the DB count columns, flagged stale) and tries the rebuild lock
 * (a {@link Mutex} with a watchdog on `{<prefix>:epoch}:rebuild`). The holder
 * rebuilds in `merge` mode (see {@link rebuildFromDatabase}) and sets the marker
 * in one Lua step that first checks it still holds the lock
 * (`commit-epoch-2.lua`), so a second loss during the rebuild is never hidden.
 * The others keep checking until the marker is back. PostgreSQL is only read:
 * no count column is ever written from Redis.
 */
export class CountsRecovery {
  readonly keys: InteractionKeys
  private readonly tables: QuotedTables
  private readonly topK: number
  private readonly checkIntervalMs: number
  private readonly chunkSize: number
  private readonly stepsInFlight: number
  private readonly mutex: Mutex
  private readonly legacy: LegacyInteractionKeys
  private current: RecoveryState = 'unknown'
  private timer: NodeJS.Timeout | undefined
  private checking: Promise<RecoveryState> | undefined
  private running: Promise<RebuildOutcome> | undefined
  /** Restores under way here, by item: concurrent toggles of one item share one (a viral item's many). */
  private readonly restoring = new Map<string, Promise<{ likes: number; favorites: number; plays: number }>>()
  /** The legacy layout's streams were seen gone: restores need not wait for them any more. */
  private legacyGone = false

  /** @throws {InvalidArgumentError} for a bad option. */
  constructor(private readonly options: CountsRecoveryOptions) {
    const layout = interactionLayout(options)
    this.keys = new InteractionKeys(layout.prefix, layout.partitions)
    this.tables = quoteTables(layout.tables)
    this.legacy = new LegacyInteractionKeys(layout.prefix, layout.partitions)
    this.topK = layout.topK
    this.checkIntervalMs = integerIn('checkIntervalMs', options.checkIntervalMs ?? 5000, 10, 3_600_000)
    this.chunkSize = integerIn('chunkSize', options.chunkSize ?? RECOVERY_DEFAULTS.chunkSize, 1, 100_000)
    this.stepsInFlight = integerIn(
      'stepsInFlight',
      options.stepsInFlight ?? RECOVERY_DEFAULTS.stepsInFlight,
      1,
      10_000,
    )
    const lockTtlMs = integerIn('lockTtlMs', options.lockTtlMs ?? 10_000, 100, 3_600_000)
    const lock = rebuildLockKey(this.keys)
    this.mutex = new Mutex(
      options.redis,
      { lock, fence: `${lock}:fence` },
      { ttlMs: lockTtlMs, watchdog: true },
    )
  }

  /** The in-process view of Redis' state. */
  get state(): RecoveryState {
    return this.current
  }

  /** True when Redis counts may be served (the last check found the marker and no rebuild runs here). */
  serving(): boolean {
    return this.current === 'ready'
  }

  /** A read found the marker missing: stop serving Redis counts and check now. */
  notifyEpochMissing(): void {
    if (this.current !== 'rebuilding') this.emit({ type: 'epoch-missing' })
    this.current = 'rebuilding'
    void this.check()
  }

  /** Checks now, then every `checkIntervalMs` until {@link stop}. */
  start(): void {
    if (this.timer) return
    void this.check()
    this.timer = setInterval(() => void this.check(), this.checkIntervalMs)
    this.timer.unref()
  }

  /** Stops the periodic check and waits for a running rebuild to end. */
  async stop(): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    await this.running?.catch(() => undefined)
  }

  /**
   * Checks now and waits until Redis counts may be served (the marker is
   * present, or the rebuild this check started has committed), at most `timeoutMs`.
   * For start-up: a fresh deployment (empty Redis) rebuilds at once and serves Redis from the first request.
   * @param timeoutMs how long to wait (ms). @default 5000
   * @returns `serving()` at the end. Never throws.
   */
  async waitUntilServing(timeoutMs = 5000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      await this.check()
      const left = deadline - Date.now()
      if (this.running && left > 0) await Promise.race([this.running, sleep(left)])
      if (this.serving()) return true
      if (Date.now() >= deadline) return false
      await sleep(Math.min(50, Math.max(1, deadline - Date.now())))
    }
  }

  /**
   * One check of the marker; starts a background rebuild when it is missing and none runs here.
   * A Redis error leaves the state as it was (reads fail over by themselves). Never throws.
   */
  check(): Promise<RecoveryState> {
    this.checking ??= this.checkOnce().finally(() => {
      this.checking = undefined
    })
    return this.checking
  }

  private async checkOnce(): Promise<RecoveryState> {
    let epoch: string | null
    try {
      epoch = await this.options.redis.get(this.keys.epoch())
    } catch (error) {
      this.emit({ type: 'error', phase: 'check', error })
      return this.current
    }
    if (epoch !== null) {
      if (!this.running) this.current = 'ready'
      return this.current
    }
    if (this.current !== 'rebuilding') this.emit({ type: 'epoch-missing' })
    this.current = 'rebuilding'
    if (!this.running && (await this.legacyDrained())) void this.startRebuild('merge', 0, true)
    return this.current
  }

  /**
   * False while a stream of the legacy layout exists: its events are not in PostgreSQL yet, and a
   * rebuild now would miss them (`startLegacyLayoutDrain` applies and removes those streams).
   */
  private async legacyDrained(): Promise<boolean> {
    try {
      const left = await existingPartitions(this.options.redis, this.legacy)
      if (left.length === 0) return true
      this.emit({ type: 'legacy-draining', streams: left.length })
    } catch (error) {
      this.emit({ type: 'error', phase: 'check', error })
    }
    return false
  }

  /**
   * Rebuilds Redis from PostgreSQL now (the admin action and the CLI use this).
   * `replace` first deletes the epoch marker, so every instance serves DB counts
   * until the sets have been replaced; use it on a drained stream.
   * @param waitMs how long to wait for the rebuild lock (ms). @default 0
   * @returns `rebuilt: false, reason: 'locked'` when another instance holds the lock.
   * @throws {StoreUnavailableError} when Redis fails before the rebuild starts.
   */
  rebuild(options: { mode?: RebuildMode; waitMs?: number } = {}): Promise<RebuildOutcome> {
    return this.startRebuild(options.mode ?? 'merge', options.waitMs ?? 0, false)
  }

  /** `ifMissing`: a check found the marker missing; skip if another instance rebuilt meanwhile. */
  private startRebuild(mode: RebuildMode, waitMs: number, ifMissing: boolean): Promise<RebuildOutcome> {
    if (this.running) return this.running
    this.running = this.runRebuild(mode, waitMs, ifMissing).finally(() => {
      this.running = undefined
    })
    return this.running
  }

  private async runRebuild(mode: RebuildMode, waitMs: number, ifMissing: boolean): Promise<RebuildOutcome> {
    const lease: Lease | null =
      waitMs > 0 ? await this.mutex.acquire({ waitMs }).catch(() => null) : await this.mutex.tryAcquire()
    if (!lease) return { rebuilt: false, reason: 'locked' }
    // the check and the lock are two steps: the holder before us may have committed in between
    if (ifMissing && (await this.options.redis.get(this.keys.epoch()).catch(() => null)) !== null) {
      await lease.release()
      this.current = 'ready'
      return { rebuilt: false, reason: 'not-needed' }
    }
    const before = this.current
    if (mode === 'replace' || before !== 'ready') this.current = 'rebuilding'
    this.emit({ type: 'rebuild-started', mode })
    try {
      if (mode === 'replace') await this.options.redis.del(this.keys.epoch())
      const report = await rebuildFromDatabase({
        redis: this.options.redis,
        sql: this.options.sql,
        keys: this.keys,
        tables: this.tables,
        topK: this.topK,
        chunkSize: this.chunkSize,
        stepsInFlight: this.stepsInFlight,
        mode,
        signal: lease.signal,
      })
      const epoch = randomBytes(8).toString('hex')
      const reply = await commitEpochScript.run(
        this.options.redis,
        [rebuildLockKey(this.keys), this.keys.epoch()],
        [lease.token, epoch],
      )
      if (commitEpochReply(reply) === 'lockLost') {
        throw new RebuildAbortedError('the rebuild lock was gone at commit (Redis lost its data again?)')
      }
      this.current = 'ready'
      this.emit({ type: 'rebuilt', report, epoch })
      return { rebuilt: true, report, epoch }
    } catch (error) {
      this.current = before === 'ready' && mode === 'merge' ? 'ready' : 'rebuilding'
      this.emit({ type: 'rebuild-aborted', error })
      return { rebuilt: false, reason: 'aborted', error }
    } finally {
      await lease.release().catch(() => undefined)
    }
  }

  /**
   * Restores one item from the DB (merge: sets gain the DB members, the play
   * counter becomes max(counter, DB)). Call it before a toggle while `serving()`
   * is false: otherwise an unlike of a like the rebuild has not restored yet
   * finds no member, changes nothing and emits no event, and the like would come back.
   * Idempotent; calls for an item whose restore is under way in this process share it (each would
   * walk all its members: 16 toggles of a 150,000-liker item took 39 s, viral_recovery.test.ts).
   * While streams of the legacy layout exist it first waits for them to drain (their events are not
   * in PostgreSQL yet), at most `LEGACY_DRAIN_DEFAULTS.restoreWaitMs` (30 s).
   * @throws {RebuildAbortedError} when they did not drain in that time.
   * @throws {CountersDatabaseError} / {StoreUnavailableError}.
   */
  restoreItem(itemId: string): Promise<{ likes: number; favorites: number; plays: number }> {
    const id = canonicalId('itemId', itemId)
    const running = this.restoring.get(id)
    if (running) return running
    const input = { redis: this.options.redis, sql: this.options.sql, keys: this.keys, tables: this.tables }
    const restore = this.awaitLegacyDrained()
      .then(() => restoreOneItem({ ...input, topK: this.topK }, id))
      .finally(() => this.restoring.delete(id))
    this.restoring.set(id, restore)
    return restore
  }

  /**
   * Waits until no stream of the legacy layout is left (16 EXISTS every 50 ms, until seen once):
   * a restore from PostgreSQL before their events are applied would miss them, and its restore
   * marker would keep the rebuild from adding them later (legacy_drain_load.test.ts).
   */
  private async awaitLegacyDrained(): Promise<void> {
    const deadline = Date.now() + LEGACY_DRAIN_DEFAULTS.restoreWaitMs
    while (!this.legacyGone) {
      this.legacyGone = (await existingPartitions(this.options.redis, this.legacy)).length === 0
      if (this.legacyGone) return
      if (Date.now() > deadline)
        throw new RebuildAbortedError('not restored: the interaction layout 1 streams are still draining')
      await sleep(50)
    }
  }

  /**
   * Reports drift between Redis and the DB detail rows, and between the DB
   * count columns and the detail rows (read-only).
   * @param options.chunkSize items per page. @default the rebuild's `chunkSize`
   * @param options.maxItems stop after this many items (lowest ids first). @default all
   * @param options.maxReported drifts reported per kind. @default 100
   * @throws {CountersDatabaseError} when a query fails. @throws {StoreUnavailableError} when Redis fails.
   */
  reconcile(
    options: { chunkSize?: number; maxItems?: number; maxReported?: number } = {},
  ): Promise<ReconcileReport> {
    return reconcileCounts({
      redis: this.options.redis,
      sql: this.options.sql,
      keys: this.keys,
      tables: this.tables,
      chunkSize: integerIn('chunkSize', options.chunkSize ?? this.chunkSize, 1, 100_000),
      maxItems: options.maxItems,
      maxReported: integerIn('maxReported', options.maxReported ?? 100, 0, 1_000_000),
    })
  }

  private emit(event: RecoveryEvent): void {
    this.log(event)
    try {
      this.options.onEvent?.(event)
    } catch {
      // An observer's failure must not stop recovery.
    }
  }

  private log(event: RecoveryEvent): void {
    const logger = this.options.logger
    if (logger === undefined) return
    const fields = { primitive: 'countsRecovery', prefix: this.options.prefix }
    if (event.type === 'epoch-missing')
      logger.warn(fields, 'counts recovery: epoch marker missing, rebuilding counters from PostgreSQL')
    else if (event.type === 'legacy-draining')
      logger.warn(
        { ...fields, streams: event.streams },
        'counts recovery: waiting for the interaction layout 1 streams to drain before the rebuild',
      )
    else if (event.type === 'error')
      logger.warn(
        { ...fields, phase: event.phase, err: event.error },
        `counts recovery: ${event.phase} failed`,
      )
    else if (event.type === 'rebuild-aborted')
      logError(logger, { ...fields, err: event.error }, 'counts recovery: rebuild aborted')
  }
}
