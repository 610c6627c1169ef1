// Worker for pg_pool_database.test.ts: a pg.Pool WITHOUT any 'error' listener of its own, used
// only through pgPoolDatabase, loses its server sessions three ways (idle in the pool, checked out
// inside a transaction, mid-query). An unhandled 'error' event would crash this process (exit 1).
// argv: <database url>
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { pgPoolDatabase } from '../../src/sql/executor.js'
import { report } from '../support/processes.js'

const [url = ''] = process.argv.slice(2)
const pool = new pg.Pool({ connectionString: url, max: 2 })
const db = pgPoolDatabase(pool)
const admin = new pg.Client({ connectionString: url })
await admin.connect()
const kill = (pid: number) => admin.query('SELECT pg_terminate_backend($1)', [pid])
const pidOf = async (q: { query: typeof db.query }) =>
  Number((await q.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid)

// 1. idle pooled connections die
const idle = await Promise.all([pidOf(db), pidOf(db)])
for (const pid of new Set(idle)) await kill(pid)
await sleep(300)
const after = await pidOf(db) // the pool replaced them
report({ step: 'idle', replaced: !idle.includes(after) })

// 2. a connection checked out by a transaction dies between two statements
const inTx = await db
  .transaction(async (tx) => {
    await kill(await pidOf(tx))
    await sleep(300)
    await tx.query('SELECT 1')
  })
  .then(
    () => 'committed',
    (error: Error) => error.message,
  )
report({ step: 'transaction', outcome: inTx })

// 3. a connection dies mid-query
const pid = await pidOf(db)
const running = db.query('SELECT pg_sleep(5)').then(
  () => 'finished',
  (error: Error) => error.message,
)
await sleep(200)
const stillThere = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])
await admin.query(
  "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(5)' AND pid <> pg_backend_pid()",
)
report({ step: 'query', outcome: await running, seen: stillThere.rowCount })
await sleep(300)
report({ step: 'done', works: (await db.query('SELECT 1 AS one')).rows.length === 1 })
await admin.end()
await pool.end()
