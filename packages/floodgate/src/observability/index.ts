export { LogThrottle } from './log_throttle.js'
export { type FloodgateLogger, type LogFields, type Logger, logError } from './logger.js'
export { inSpan, type SpanAttributes, tracingOn, warmTracing } from './tracing.js'
