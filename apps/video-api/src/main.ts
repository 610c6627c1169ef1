import { checkEvictionPolicy, checkReplicas } from 'floodgate'
import pino from 'pino'
import { buildApp } from './app.js'
import { resolveJwtSecret } from './auth/secret.js'
import { type ExternalReaderWrapper, externalReaderWrapper } from './cache/external_reader.js'
import { cacheFromConfig } from './cache/from_config.js'
import { type Config, ConfigError, loadConfig } from './config/index.js'
import { countersFromConfig } from './counters/from_config.js'
import { openDatabase } from './db/connect.js'
import { dbGuardFromConfig } from './db/guard.js'
import { prepareDatabase } from './db/prepare.js'
import { interactionsFromConfig } from './interactions/from_config.js'
import { stdoutDestination } from './log/stdout_destination.js'
import { parseTrustProxy, rateLimitFromConfig } from './rate_limit/from_config.js'
import { connectRedis } from './redis/connect.js'
import { logBase } from './service_info.js'

/**
 * Entry point: config → Redis (local server if needed) → database →
 * migrations and first-start seed under advisory locks → listen. SIGINT or
 * SIGTERM drains in-flight requests (bounded by SHUTDOWN_TIMEOUT_MS), then
 * closes the pool, Redis and any local redis-server.
 */
async function main(): Promise<void> {
  let config: Config
  let wrapper: ExternalReaderWrapper | undefined
  try {
    config = loadConfig({ argv: process.argv.slice(2) })
    if (config.cacheMode === 'legacy') wrapper = externalReaderWrapper()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`video-api: invalid configuration: ${error.message}\n`)
      process.exit(78)
    }
    throw error
  }
  // one destination for the start-up lines and the app's: they stay in order
  const destination = stdoutDestination(config.logFlushMs)
  const log = pino({ level: config.logLevel, base: logBase() }, destination)
  let redis: Awaited<ReturnType<typeof connectRedis>>
  try {
    redis = await connectRedis(config)
  } catch (error) {
    log.fatal((error as Error).message)
    process.exit(69)
  }
  if (redis.local)
    log.info({ url: redis.local.url, dir: `${config.dataDir}/redis` }, 'started a local redis-server')
  // Own connection and a 2 s timeout: the service's 50 ms command timeout is too short for a loaded Redis.
  const eviction = await checkEvictionPolicy(redis.client, { timeoutMs: 2000 })
  if (eviction.safe === false)
    log.warn(
      { maxmemoryPolicy: eviction.policies },
      'REDIS MAY EVICT KEYS: maxmemory-policy is not noeviction; likes, play counters and unflushed interaction events could be lost. Set maxmemory-policy noeviction.',
    )
  else if (eviction.safe === undefined)
    log.warn(
      { cause: eviction.error },
      'could not read Redis maxmemory-policy (CONFIG GET failed); make sure it is noeviction, or likes, play counters and unflushed interaction events could be lost.',
    )
  if (config.interactionWaitReplicas > 0) {
    const replicas = await checkReplicas(redis.client, config.interactionWaitReplicas, { timeoutMs: 2000 })
    if (replicas.enough === false)
      log.warn(
        { wanted: config.interactionWaitReplicas, masters: replicas.masters },
        'INTERACTION_WAIT_REPLICAS exceeds the online replicas of some Redis master: every like, favourite and play written there will answer 503 until enough replicas are online.',
      )
    else if (replicas.enough === undefined)
      log.warn({ cause: replicas.error }, 'could not read the Redis replicas (INFO replication failed)')
  }
  let database: Awaited<ReturnType<typeof openDatabase>>
  try {
    database = await openDatabase(config)
  } catch (error) {
    // e.g. VIDEO_API_DATA_DIR_LOCKED: another instance has the PGlite folder open.
    log.fatal({ code: (error as { code?: unknown }).code }, (error as Error).message)
    await redis.close().catch(() => {})
    process.exit(1)
  }
  log.info(
    { kind: database.kind, dataDir: database.kind === 'pglite' ? config.dataDir : undefined },
    'database open',
  )
  const closeAll = async () => {
    await database.close().catch((error: unknown) => log.error({ err: error }, 'closing database failed'))
    await redis.close().catch((error: unknown) => log.error({ err: error }, 'closing redis failed'))
  }
  try {
    const { migrations, seeded } = await prepareDatabase(database.db, config)
    if (migrations.length > 0) log.info({ migrations }, 'migrations applied')
    if (seeded) log.info(seeded, 'seeded the demo catalog')
  } catch (error) {
    log.fatal({ err: error }, 'database preparation failed')
    await closeAll()
    process.exit(1)
  }
  const interactions = interactionsFromConfig(config)
  const app = await buildApp({
    db: database.db,
    redis: redis.client,
    redisPrefix: config.redisPrefix,
    jwtSecret: resolveJwtSecret(config.jwtSecret, config.dataDir),
    jwtTtlS: config.jwtTtlS,
    knownUserTtlMs: config.authKnownUserTtlMs,
    bodyLimitBytes: config.bodyLimitBytes,
    requestTimeoutMs: config.requestTimeoutMs,
    connectionTimeoutMs: config.connectionTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    logger: { level: config.logLevel, stream: destination },
    counters: countersFromConfig(config),
    interactions: interactions.interactions,
    interactionFlush: interactions.flush,
    trustProxy: parseTrustProxy(config.trustProxy),
    rateLimit: rateLimitFromConfig(config),
    cache: cacheFromConfig(config),
    dbGuard: dbGuardFromConfig(config),
    ...(wrapper
      ? { wrapReader: (reader) => wrapper(reader, { redis: redis.client, prefix: config.redisPrefix }) }
      : {}),
  })
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'shutting down')
    const force = setTimeout(() => {
      app.log.error('shutdown timed out; exiting')
      process.exit(1)
    }, config.shutdownTimeoutMs)
    force.unref()
    // Cut connections still open near the deadline, so a stalled client cannot turn the drain into
    // the forced exit (which skips closeAll()).
    const cut = setTimeout(
      () => {
        app.log.warn('drain deadline near: closing the connections still open')
        app.server.closeAllConnections()
      },
      // leaves up to 2 s for the onClose hooks (the flush's blocking read takes up to 1 s) and the pools
      Math.max(0, config.shutdownTimeoutMs - Math.min(2000, config.shutdownTimeoutMs / 3)),
    )
    cut.unref()
    await app.close()
    clearTimeout(cut)
    await closeAll()
    app.log.info('stopped')
    process.exit(0)
  }
  process.once('SIGINT', () => void stop('SIGINT'))
  process.once('SIGTERM', () => void stop('SIGTERM'))
  try {
    await app.listen({ port: config.port, host: config.host })
  } catch (error) {
    app.log.fatal({ err: error }, 'listen failed')
    await closeAll()
    process.exit(1)
  }
}

await main()
