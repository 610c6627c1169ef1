import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { InvalidArgumentError } from '../errors/index.js'
import type { MetricsRegistry } from '../metrics/registry.js'
import type { Logger } from '../observability/index.js'
import { positiveInteger } from '../validation/index.js'
import type { BatchHandler, ConsumerEvent, StreamSource } from './types.js'

/** Options of a {@link StreamGroupConsumer}. */
export interface StreamConsumerOptions {
  /** The streams to consume (each with its dead-letter stream). Required, non-empty. */
  sources: readonly StreamSource[]
  /** Consumer group name; created at id 0 with MKSTREAM when missing. Required. */
  group: string
  /** Applies one batch; must be idempotent. Required. */
  handler: BatchHandler
  /**
   * This consumer's name in the group; unique per process.
   * @default `<hostname>-<pid>-<6 random hex>`
   */
  consumerName?: string
  /**
   * Target entries per batch (one handler call); a read spreads it over the streams.
   * @default 1000
   */
  batchSize?: number
  /**
   * While a full batch (`batchSize` entries: the consumer is behind) is applied, read the next one
   * (non-blocking, at most one batch ahead), so this process's CPU (the read, decoding its reply)
   * and the database's overlap instead of adding up. Its entries are pending to this consumer from
   * the read on; `stop()` hands an unapplied one back at once. `false`: read, apply, acknowledge
   * in turn.
   * @default true
   */
  readAhead?: boolean
  /**
   * Read new entries through `read-compact-1.lua` (one script call per stream, pipelined) instead
   * of XREADGROUP: each entry comes back as one string, so the client decodes one reply item per
   * entry instead of 2 + 2 per field. The blocking wait when all streams are empty stays a plain
   * XREADGROUP.
   * @default false
   */
  compactRead?: boolean
  /**
   * How long (ms) a blocking XREADGROUP waits when every stream is empty (single-node Redis).
   * @default 1000
   */
  blockMs?: number
  /**
   * Sleep (ms) between polls when every stream is empty on Redis Cluster (where one blocking
   * read cannot span slots).
   * @default 100
   */
  pollIntervalMs?: number
  /**
   * Idle time (ms) after which an entry pending on another (presumably dead) consumer is claimed
   * with XAUTOCLAIM.
   * @default 30000
   */
  claimIdleMs?: number
  /**
   * How often (ms) to look for idle pending entries.
   * @default min(claimIdleMs, 5000)
   */
  claimIntervalMs?: number
  /**
   * An entry that fails with a poison error (see `isPoison`) after this many deliveries goes to
   * the dead-letter stream. Transient failures (the database is down) never dead-letter.
   * @default 5
   */
  maxDeliveries?: number
  /**
   * Tells a poison error (this data can never apply: bisect the batch, count deliveries) from a
   * transient one (retry the same batch with backoff, unacknowledged).
   * @default every error is transient
   */
  isPoison?: (error: unknown) => boolean
  /**
   * Backoff after a transient failure: full jitter over base · 2^attempt (ms), capped at `backoffMaxMs`.
   * @default 100
   */
  backoffBaseMs?: number
  /** @default 5000 */
  backoffMaxMs?: number
  /**
   * How often (ms) to trim acknowledged entries, refresh the lag gauges and (with `membersKey`)
   * beat the membership heartbeat.
   * @default 1000
   */
  maintenanceIntervalMs?: number
  /**
   * How often (ms) maintenance trims every stream. In between, a stream that its last trim found
   * idle (nothing pending or undelivered, at most one entry) is only checked for a new last entry
   * (one XREVRANGE … COUNT 1, pipelined) and trimmed once it has one: an idle consumer over
   * hundreds of streams then sends one cheap read per stream per `maintenanceIntervalMs`
   * instead of running the trim script (about seven commands) on each.
   * @default 30000
   */
  idleRecheckMs?: number
  /**
   * Partition assignment: a sorted-set key where the group's consumers beat a heartbeat (Redis
   * time). When set, the streams are shared among the live members — stream `i` of `sources` goes
   * to member `i mod n`, members ordered by name — and each consumer reads new entries (`>`) only
   * from its own streams, so consumers applying at once work on different partitions instead of
   * queueing on the same rows. A member joining or leaving (`stop()`) moves streams within one
   * `maintenanceIntervalMs`, a silent one (crashed, or stuck in one apply) after `memberTtlMs`;
   * meanwhile two consumers may read the same stream, which the idempotent handler absorbs. Claiming idle entries (`claimIdleMs`) still
   * covers every stream. Unset: every consumer reads every stream.
   * @default none
   */
  membersKey?: string
  /**
   * A member silent for this long (ms) is dropped and its streams reassigned (only with
   * `membersKey`). Must exceed `maintenanceIntervalMs + blockMs`, the longest quiet gap of a
   * healthy consumer.
   * @default max(5000, 2 · (maintenanceIntervalMs + blockMs))
   */
  memberTtlMs?: number
  /**
   * With `membersKey`: a stream of another member whose oldest undelivered entry is this old (ms)
   * at a maintenance round is read by this consumer too, until it is caught up — the owner is
   * stalled or overloaded, and waiting for its `memberTtlMs` would hold the partition's events.
   * While helping, consumers share that stream (and its rows) as without assignment.
   * @default 2000
   */
  helpAfterMs?: number
  /** Registry (a prom-client `Registry`) for the lag and throughput metrics. @default none (no metrics) */
  registry?: MetricsRegistry
  /** Metric name prefix. @default `floodgate_stream_` */
  metricPrefix?: string
  /** Observer for errors, rejections, dead letters and claims. @default none */
  onEvent?: (event: ConsumerEvent) => void
  /**
   * Where the consumer logs (see {@link Logger}): an `error` event (warn; the batch is retried, a
   * failed dead-letter write at error), a dead-lettered entry (warn). @default none
   */
  logger?: Logger
}

export type ResolvedConsumerOptions = Required<
  Omit<StreamConsumerOptions, 'registry' | 'onEvent' | 'membersKey' | 'logger'>
> &
  Pick<StreamConsumerOptions, 'registry' | 'onEvent' | 'membersKey' | 'logger'>

/** The defaults of {@link StreamConsumerOptions}, in one place (ms). */
export const STREAM_CONSUMER_DEFAULTS = {
  batchSize: 1000,
  readAhead: true,
  compactRead: false,
  blockMs: 1000,
  pollIntervalMs: 100,
  claimIdleMs: 30_000,
  /** `claimIntervalMs` = min(`claimIdleMs`, this). */
  claimIntervalMaxMs: 5000,
  maxDeliveries: 5,
  backoffBaseMs: 100,
  backoffMaxMs: 5000,
  maintenanceIntervalMs: 1000,
  metricPrefix: 'floodgate_stream_',
  helpAfterMs: 2000,
  idleRecheckMs: 30_000,
} as const

/** Applies defaults and checks ranges. @throws {InvalidArgumentError} naming the field. */
export function resolveConsumerOptions(options: StreamConsumerOptions): ResolvedConsumerOptions {
  if (options.sources.length === 0) throw new InvalidArgumentError('sources', 'must not be empty')
  if (options.group.length === 0) throw new InvalidArgumentError('group', 'must not be empty')
  const { claimIntervalMaxMs, ...d } = STREAM_CONSUMER_DEFAULTS
  const claimIdleMs = options.claimIdleMs ?? d.claimIdleMs
  const o: ResolvedConsumerOptions = {
    consumerName: `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    ...d,
    claimIntervalMs: Math.min(claimIdleMs, claimIntervalMaxMs),
    isPoison: () => false,
    memberTtlMs: 0,
    ...stripUndefined(options),
    claimIdleMs,
  }
  if (options.memberTtlMs === undefined) {
    o.memberTtlMs = Math.max(5000, 2 * (o.maintenanceIntervalMs + o.blockMs))
  }
  for (const field of [
    'batchSize',
    'blockMs',
    'pollIntervalMs',
    'claimIdleMs',
    'claimIntervalMs',
    'maxDeliveries',
    'backoffBaseMs',
    'backoffMaxMs',
    'maintenanceIntervalMs',
    'memberTtlMs',
    'helpAfterMs',
    'idleRecheckMs',
  ] as const) {
    positiveInteger(field, o[field])
  }
  if (o.membersKey !== undefined && o.membersKey.length === 0) {
    throw new InvalidArgumentError('membersKey', 'must not be empty')
  }
  if (o.memberTtlMs <= o.maintenanceIntervalMs + o.blockMs) {
    throw new InvalidArgumentError(
      'memberTtlMs',
      `must exceed maintenanceIntervalMs + blockMs (${o.maintenanceIntervalMs + o.blockMs}), got ${o.memberTtlMs}`,
    )
  }
  return o
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}
