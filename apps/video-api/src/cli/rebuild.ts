import { parseArgs } from 'node:util'
import { CountsRecovery } from 'floodgate'
import { ConfigError, loadConfig } from '../config/index.js'
import { videoRebuildReport, videoReconcileReport } from '../counters/video_reports.js'
import { openDatabase } from '../db/connect.js'
import { kyselySqlDatabase } from '../interactions/sql_database.js'
import { videoInteractionTables } from '../interactions/tables.js'
import { connectRedis } from '../redis/connect.js'
import { integerArgument } from './integer_argument.js'

/**
 * `npm run rebuild-counters -w video-api -- [--mode merge|replace] [--reconcile] [--max-videos N] [--partitions P] [--top-k K]`
 * (P and K default to the config's INTERACTION_PARTITIONS and INTERACTION_TOP_K).
 *
 * Rebuilds Redis like/favourite sets, play counters and all-time rankings from
 * PostgreSQL (the same code as the automatic recovery and
 * `POST /admin/rebuild/counters`), then sets the epoch marker, so running
 * instances serve Redis counts again. `--reconcile` only reports drift.
 * Prints JSON; exit code 1 on failure, 2 when another instance holds the rebuild lock.
 */
const usage =
  'usage: rebuild-counters [--mode merge|replace] [--reconcile] [--max-videos N] [--partitions P] [--top-k K] [--config file]'

try {
  const { values } = parseArgs({
    options: {
      mode: { type: 'string' },
      reconcile: { type: 'boolean' },
      'max-videos': { type: 'string' },
      partitions: { type: 'string' },
      'top-k': { type: 'string' },
      config: { type: 'string' },
    },
    strict: true,
  })
  const mode = values.mode ?? 'merge'
  if (mode !== 'merge' && mode !== 'replace')
    throw new ConfigError('--mode', `must be merge or replace\n${usage}`)
  const config = loadConfig({ argv: values.config ? ['--config', values.config] : [] })
  const redis = await connectRedis({
    ...config,
    redisMaxWaitMs: Math.max(config.redisMaxWaitMs, 5000),
  })
  const database = await openDatabase(config)
  try {
    if (redis.client.status !== 'ready') await new Promise((resolve) => redis.client.once('ready', resolve))
    const recovery = new CountsRecovery({
      redis: redis.client,
      sql: kyselySqlDatabase(database.db),
      prefix: config.redisPrefix,
      partitions: integerArgument('partitions', values.partitions, config.interactionPartitions, 1, usage),
      topK: integerArgument('top-k', values['top-k'], config.interactionTopK, 1, usage),
      tables: videoInteractionTables,
      onEvent: (event) => process.stderr.write(`${event.type}\n`),
    })
    if (values.reconcile) {
      const report = videoReconcileReport(
        await recovery.reconcile({
          maxItems: integerArgument('max-videos', values['max-videos'], 2 ** 31, 1, usage),
        }),
      )
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
      if (report.drifted.length > 0 || report.columnDrift.length > 0) process.exitCode = 3
    } else {
      const outcome = await recovery.rebuild({ mode, waitMs: 30_000 })
      const printed = outcome.rebuilt ? { ...outcome, report: videoRebuildReport(outcome.report) } : outcome
      process.stdout.write(`${JSON.stringify(printed, (_k, v) => (v instanceof Error ? v.message : v), 2)}\n`)
      if (!outcome.rebuilt) process.exitCode = outcome.reason === 'locked' ? 2 : 1
    }
  } finally {
    await database.close()
    await redis.close()
  }
} catch (error) {
  process.stderr.write(`rebuild-counters failed: ${(error as Error).message}\n`)
  process.exitCode = 1
}
