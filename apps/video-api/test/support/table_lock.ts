import { TEST_DATABASE_URL } from '@floodgate/test-support'
import pg from 'pg'

export interface TableLock {
  /** Statements of other sessions waiting for this lock now (each one a query stuck in PostgreSQL). */
  waiting(): Promise<number>
  /** Commits: the waiting statements run. */
  release(): Promise<void>
}

/**
 * Holds `ACCESS EXCLUSIVE` on `schema.table` from a connection of its own (PostgreSQL server
 * only): every statement that reads the table waits inside PostgreSQL until `release()`.
 * Plays "the database is slow" for the statements on that table and nothing else.
 */
export async function lockTable(schema: string, table: string): Promise<TableLock> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  await client.query('begin')
  await client.query(`lock table "${schema}"."${table}" in access exclusive mode`)
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
  const observer = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await observer.connect()
  return {
    async waiting() {
      const { rows } = await observer.query<{ n: number }>(
        'select count(*)::int as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))',
        [pid],
      )
      return rows[0]!.n
    },
    async release() {
      await client.query('commit')
      await client.end()
      await observer.end()
    },
  }
}
