import { sql } from 'kysely'
import { openPostgres } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { report } from '../support/workers.js'

/** Worker: waits for a common start time (ms epoch, argv[3]), then migrates schema argv[2]; reports what it applied. */
const [url, schema, startAt] = [process.argv[2]!, process.argv[3]!, Number(process.argv[4])]
const handle = await openPostgres({ url, schema, poolMax: 2 })
await sql`select 1`.execute(handle.db)
await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())))
try {
  const applied = await migrateToLatest(handle.db)
  report({ ok: true, applied })
} catch (error) {
  report({ ok: false, error: String(error) })
} finally {
  await handle.close()
}
