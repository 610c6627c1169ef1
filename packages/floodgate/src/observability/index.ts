export type { FloodgateLogger } from './logger.js'
export { inSpan, type SpanAttributes } from './tracing.js'
