// Imports floodgate in a process where `prom-client` cannot be resolved (a resolve hook refuses
// it), then uses a limiter: an app without prom-client must be able to use the primitives.
import { register } from 'node:module'

const refuse = `export async function resolve(specifier, context, next) {
  if (specifier === 'prom-client' || specifier.startsWith('prom-client/')) {
    const error = new Error('Cannot find package prom-client (hidden by the test)')
    error.code = 'ERR_MODULE_NOT_FOUND'
    throw error
  }
  return next(specifier, context)
}`
register(`data:text/javascript,${encodeURIComponent(refuse)}`)

try {
  const { createRateLimiter, createRedisClient } = await import('../../../src/index.js')
  const redis = createRedisClient(process.argv[2] ?? 'redis://127.0.0.1:6379')
  const limiter = createRateLimiter({
    redis,
    prefix: process.argv[3] ?? 'fgtest:noprom',
    name: 'api',
    algorithm: 'fixedWindow',
    limit: 5,
    windowMs: 60_000,
  })
  const result = await limiter.limit('k')
  process.stdout.write(`${JSON.stringify({ source: result.source })}\n`)
  await redis.quit()
} catch (error) {
  process.stdout.write(`${JSON.stringify({ error: String(error) })}\n`)
}
