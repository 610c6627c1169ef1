import type { InteractionOptions } from 'floodgate'
import type { Config } from '../config/types.js'
import type { FlushSettings } from './flush.js'

/**
 * Write-path and flush settings from the validated config (`INTERACTION_*`, `PLAY_DEDUPE_WINDOW_MS`,
 * `FLUSH_*`). `waitForReplicas` only when `INTERACTION_WAIT_REPLICAS` > 0.
 */
export function interactionsFromConfig(config: Config): {
  interactions: Omit<InteractionOptions, 'prefix'>
  flush: FlushSettings
} {
  return {
    interactions: {
      partitions: config.interactionPartitions,
      topK: config.interactionTopK,
      playDedupeWindowMs: config.playDedupeWindowMs,
      maxEventsPerCall: config.interactionMaxEventsPerCall,
      ...(config.interactionWaitReplicas > 0
        ? {
            waitForReplicas: {
              replicas: config.interactionWaitReplicas,
              timeoutMs: config.interactionWaitTimeoutMs,
            },
          }
        : {}),
    },
    flush: {
      batchSize: config.flushBatchSize,
      claimIdleMs: config.flushClaimIdleMs,
      maxDeliveries: config.flushMaxDeliveries,
    },
  }
}
