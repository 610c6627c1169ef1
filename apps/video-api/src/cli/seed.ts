import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '../config/index.js'
import { openDatabase } from '../db/connect.js'
import { migrateToLatest, withAdvisoryLock } from '../db/migrate.js'
import { SEED_ANCHOR_MS } from '../db/prepare.js'
import { seedCatalog } from '../seed/insert.js'
import { integerArgument } from './integer_argument.js'

/**
 * `npm run seed -- --users N --videos M [--seed S] [--anchor ISO-date]`:
 * migrates, then inserts a deterministic catalog into the configured database
 * (DATABASE_URL, or PGlite in DATA_DIR) and prints rows per second.
 */
const usage = 'usage: npm run seed -- --users N --videos M [--seed 42] [--anchor 2026-11-01T00:00:00Z]'

try {
  const { values } = parseArgs({
    options: {
      users: { type: 'string' },
      videos: { type: 'string' },
      seed: { type: 'string' },
      anchor: { type: 'string' },
      config: { type: 'string' },
    },
    strict: true,
  })
  const config = loadConfig({ argv: values.config ? ['--config', values.config] : [] })
  const anchorMs = values.anchor === undefined ? SEED_ANCHOR_MS : Date.parse(values.anchor)
  if (Number.isNaN(anchorMs))
    throw new ConfigError('--anchor', `must be an ISO date, got ${JSON.stringify(values.anchor)}`)
  const plan = {
    users: integerArgument('users', values.users, 1000, 1, usage),
    videos: integerArgument('videos', values.videos, 10_000, 0, usage),
    seed: integerArgument('seed', values.seed, 42, 0, usage),
    anchorMs,
  }
  const database = await openDatabase(config)
  try {
    await migrateToLatest(database.db)
    const report = await withAdvisoryLock(database.db, 'seed', (conn) => seedCatalog(conn, plan))
    process.stdout.write(
      `seeded ${report.users} users and ${report.videos} videos (seed ${plan.seed}) into ${database.kind} ` +
        `in ${(report.elapsedMs / 1000).toFixed(2)} s: ${report.rowsPerSecond} rows/s\n`,
    )
  } finally {
    await database.close()
  }
} catch (error) {
  const e = error as Error & { code?: string }
  process.stderr.write(
    `seed failed: ${e.message}${e.code === '23505' ? ' (this seed is already loaded; pass --seed)' : ''}\n`,
  )
  process.exitCode = 1
}
