export { type PgPoolLike, pgPoolDatabase, type SqlDatabase, type SqlExecutor } from './executor.js'
