import type { SqlDatabase, SqlExecutor } from 'floodgate'
import { CompiledQuery, type Kysely, type Transaction } from 'kysely'

/**
 * floodgate's SQL seam on Kysely: raw parameterized statements through
 * `executeQuery(CompiledQuery.raw(text, params))`, transactions through
 * `db.transaction()`. Works on a `pg` pool and on PGlite alike.
 */
export function kyselySqlDatabase<DB>(db: Kysely<DB>): SqlDatabase {
  return {
    ...executor(db),
    transaction: (fn) => db.transaction().execute((trx) => fn(executor(trx))),
  }
}

function executor<DB>(db: Kysely<DB> | Transaction<DB>): SqlExecutor {
  return {
    async query<R>(text: string, params: readonly unknown[] = []) {
      const result = await db.executeQuery<R>(CompiledQuery.raw(text, [...params]))
      return { rows: [...result.rows] }
    },
  }
}
