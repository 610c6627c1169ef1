export type { PgCopyFrom, PgCopyStream } from './copy.js'
export {
  type PgPoolDatabaseOptions,
  type PgPoolLike,
  pgPoolDatabase,
  type SqlDatabase,
  type SqlExecutor,
} from './executor.js'
