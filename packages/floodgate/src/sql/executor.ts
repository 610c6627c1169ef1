import { copyFromText, type PgCopyFrom } from './copy.js'

/**
 * The little SQL access floodgate needs: parameterized queries (`$1`, `$2`, …,
 * PostgreSQL placeholders) returning rows, and a transaction. The library never
 * imports a driver: {@link pgPoolDatabase} adapts a `pg.Pool`; a service on Kysely
 * adapts it with `executeQuery(CompiledQuery.raw(text, params))` (PGlite works too).
 */
export interface SqlExecutor {
  /** Runs one statement. @throws whatever the driver throws (callers wrap it). */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<{ rows: R[] }>
  /**
   * Optional bulk load: runs `statement` (`COPY … FROM STDIN`) with `data`, rows in COPY text
   * format, each ending in `\n`. Left out where the driver has no COPY (PGlite, Kysely): callers
   * then load through parameters. {@link pgPoolDatabase} has it on its transactions when given
   * pg-copy-streams' `from`.
   * @throws whatever the driver throws.
   */
  copyFrom?(statement: string, data: string): Promise<void>
}

/** A {@link SqlExecutor} that can also run a function inside one transaction. */
export interface SqlDatabase extends SqlExecutor {
  /** Runs `fn` in BEGIN … COMMIT (ROLLBACK when it throws) on one connection. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>
}

/** The part of `pg.Pool` the adapter uses (structural, so the library needs no `pg` dependency). */
export interface PgPoolLike {
  /** EventEmitter (pg.Pool): an idle pooled client that loses its server emits `error` on the pool. */
  on?(event: 'error', listener: (error: Error) => void): unknown
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>
  connect(): Promise<{
    query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>
    release(error?: Error | boolean): void
    /** EventEmitter (pg's PoolClient): a checked-out client that loses its server emits `error`. */
    on?(event: 'error', listener: (error: Error) => void): unknown
    off?(event: 'error', listener: (error: Error) => void): unknown
  }>
}

/** Options of {@link pgPoolDatabase}. */
export interface PgPoolDatabaseOptions {
  /**
   * Told about an idle pooled connection that died (server restart, `pg_terminate_backend`,
   * network cut); pg-pool has already dropped it and opens a new one on the next query.
   * @default ignore
   */
  onIdleError?: (error: Error) => void
  /**
   * pg-copy-streams' `from` (`import { from } from 'pg-copy-streams'`): gives the transactions
   * {@link SqlExecutor.copyFrom}, which the interaction flush uses to load a batch with one COPY.
   * @default none (no `copyFrom`: loads go through parameters)
   */
  copyFrom?: PgCopyFrom
}

/**
 * Adapts a `pg.Pool` (or anything shaped like it) to {@link SqlDatabase}.
 *
 * It adds an `error` listener to the pool: when an idle pooled connection dies, pg-pool removes
 * it and emits `error` on the pool, and an `error` event without a listener would crash the
 * process ("Connection terminated unexpectedly"). Connections checked out by a transaction get
 * their own listener for as long as they are out; `pool.query` guards its own.
 */
export function pgPoolDatabase(pool: PgPoolLike, options: PgPoolDatabaseOptions = {}): SqlDatabase {
  pool.on?.('error', (error) => options.onIdleError?.(error))
  return {
    async query<R>(text: string, params: readonly unknown[] = []) {
      const result = await pool.query(text, [...params])
      return { rows: result.rows as R[] }
    },
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      const client = await pool.connect()
      const { copyFrom } = options
      const tx: SqlExecutor = {
        async query<R>(text: string, params: readonly unknown[] = []) {
          const result = await client.query(text, [...params])
          return { rows: result.rows as R[] }
        },
        ...(copyFrom && {
          copyFrom: (statement: string, data: string) => copyFromText(client, copyFrom, statement, data),
        }),
      }
      let failed: Error | undefined
      // Between two statements of the transaction the client is checked out but idle; if the server
      // goes away then (restart, pg_terminate_backend) pg emits `error` on the client, which would
      // crash the process without a listener. Record it: the next statement fails with it anyway.
      const onError = (error: Error) => {
        failed ??= error
      }
      client.on?.('error', onError)
      try {
        await client.query('BEGIN')
        const value = await fn(tx)
        await client.query('COMMIT')
        return value
      } catch (error) {
        failed = error instanceof Error ? error : new Error(String(error))
        await client.query('ROLLBACK').catch(() => undefined)
        throw error
      } finally {
        client.off?.('error', onError)
        client.release(failed)
      }
    },
  }
}
