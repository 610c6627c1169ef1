export * from './backoff/index.js'
export * from './bloom/index.js'
export * from './cache/index.js'
export * from './circuit_breaker/index.js'
export * from './counters/index.js'
export * from './deadline/index.js'
export * from './errors/index.js'
export * from './guard/index.js'
export * from './interactions/index.js'
export * from './lock/index.js'
export * from './metrics/index.js'
// warmTracing and logError stay internal
export {
  type FloodgateLogger,
  inSpan,
  type LogFields,
  type Logger,
  LogThrottle,
  type SpanAttributes,
} from './observability/index.js'
export * from './rankings/index.js'
export * from './ratelimit/index.js'
export * from './redis/index.js'
export * from './stream/index.js'
export * from './tracking/index.js'
