export { StreamGroupConsumer } from './consumer.js'
export { STREAM_CONSUMER_DEFAULTS, type StreamConsumerOptions } from './options.js'
export { compareStreamIds, parseStreamId, type StreamIdParts } from './stream_id.js'
export type {
  BatchHandler,
  BatchOutcome,
  ConsumerEvent,
  ConsumerStats,
  FailedEntry,
  LagSnapshot,
  StreamEntry,
  StreamSource,
} from './types.js'
