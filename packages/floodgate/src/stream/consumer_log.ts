import { type Logger, logError } from '../observability/index.js'
import type { ConsumerEvent } from './types.js'

/** Logs a consumer's failures and dead letters (warn; a failed dead-letter write at error). */
export function logConsumerEvent(
  logger: Logger | undefined,
  group: string,
  consumer: string,
  event: ConsumerEvent,
): void {
  if (logger === undefined) return
  const fields = { primitive: 'streamConsumer', group, consumer }
  if (event.type === 'error' && event.phase === 'dead-letter')
    logError(logger, { ...fields, err: event.error }, `stream consumer ${group}: dead-letter write failed`)
  else if (event.type === 'error')
    logger.warn(
      { ...fields, phase: event.phase, err: event.error },
      `stream consumer ${group}: ${event.phase} failed`,
    )
  else if (event.type === 'dead-lettered')
    logger.warn(
      { ...fields, stream: event.stream, id: event.id, deliveries: event.deliveries, err: event.error },
      `stream consumer ${group}: entry ${event.id} dead-lettered after ${event.deliveries} deliveries`,
    )
}
