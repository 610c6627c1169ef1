import type { InteractionKeys } from '../interactions/keys.js'

/**
 * Restore markers of a partition: `<prefix>:ix:{<tag>}:restored` (`<tag>` = `keys.tagOf(p)`), a HASH with a
 * field `<kind>:<itemId>` per item restored since the loss (see restore-members-4.lua).
 */
export function restoredKey(keys: InteractionKeys, partition: number): string {
  return keys.space.tagged('ix', keys.tagOf(partition), 'restored')
}

/**
 * Markers live this long (ms) after the last one was set. They are not deleted when the
 * rebuild commits: an instance that has not yet seen the new epoch still restores before
 * its toggles, and must still find them. A new loss takes them with it.
 */
export const MARKER_TTL_MS = 3_600_000
