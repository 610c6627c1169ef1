export type { FloodgateLogger } from './logger.js'
export { inSpan, type SpanAttributes, warmTracing } from './tracing.js'
