// Rate limiting: a token bucket of 5 per second admits the burst of 5, then answers 429s.
import { createRateLimiter, rateLimitHeaders } from 'floodgate/ratelimit'
import { cleanUp, connect, prefix } from '../connect.js'

const redis = await connect()
const limiter = createRateLimiter({
  redis,
  prefix,
  algorithm: 'tokenBucket',
  limit: 5, // tokens refilled per window
  windowMs: 1_000,
})

const statuses: number[] = []
for (let i = 0; i < 8; i++) {
  const result = await limiter.limit('client-42')
  statuses.push(result.allowed ? 200 : 429)
  if (i === 7) console.log('headers of the last answer:', rateLimitHeaders(result))
}

console.log(`rate-limit: ${statuses.join(' ')}`)
await cleanUp(redis)
await redis.quit()
if (statuses.join(' ') !== '200 200 200 200 200 429 429 429') process.exit(1)
