import type { InteractionKeys } from '../interactions/keys.js'

/**
 * The rebuild lock: `{<prefix>:epoch}:rebuild`. Its hash tag is `<prefix>:epoch`,
 * and a key without braces (the marker `<prefix>:epoch`) hashes its whole name,
 * so on Redis Cluster both land in one slot and `commit-epoch-2.lua` may touch both.
 */
export function rebuildLockKey(keys: InteractionKeys): string {
  return `{${keys.epoch()}}:rebuild`
}
