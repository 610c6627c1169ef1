/**
 * The older interaction write layout, for the viral scenario's "older design" mode only (bench
 * code: the library has no such path). With LEGACY_INTERACTIONS=true, register.ts calls
 * {@link installOldInteractionWrites}: video-api's `Interactions.setLiked` then runs the toggle as
 * shipped before issue 25 (bench/viral/lua/legacy-toggle-4.lua: one SET per video, SADD/SREM +
 * SCARD) and `recordPlay` main's play-5.lua (bench/viral/previous: one dedupe key per viewer,
 * SET NX PX + INCR), one script call per request. Both append the same events to the library's
 * partition stream, so the service's flush applies them to PostgreSQL unchanged. Their keys carry
 * the partition's hash tag under `<prefix>:old:` ({@link oldLayoutKeys}), apart from the
 * library's keys and from what its legacy-layout drain removes (`<prefix>:ix:{ix:<digits>}`).
 * Page reads still count likes from the library's layout, which these writes do not touch.
 */
import { type InteractionKeys, Interactions, LuaScript, toMember } from 'floodgate'
import type { Redis } from 'ioredis'

export const oldToggleScript = new LuaScript(new URL('../../viral/lua/legacy-toggle-4.lua', import.meta.url))
export const oldPlayScript = new LuaScript(new URL('../../viral/previous/play-5.lua', import.meta.url))

/** The older layout's keys of `item`: its like SET and the prefix of its per-viewer dedupe keys. */
export function oldLayoutKeys(keys: InteractionKeys, item: string): { likes: string; seenPrefix: string } {
  const tag = keys.tagOf(keys.partitionOf(item))
  return {
    likes: keys.space.tagged('old', tag, `likes:${item}`),
    seenPrefix: keys.space.tagged('old', tag, `seen:${item}:`),
  }
}

interface Internals {
  keys: InteractionKeys
  options: { topK: number; bucketTtlMs: number; playDedupeWindowMs: number }
  redis: Redis
}

/** Replaces `Interactions.setLiked` and `recordPlay` in this process with the older layout's scripts. */
export function installOldInteractionWrites(): void {
  Interactions.prototype.setLiked = async function (this: Interactions, itemId, userId, liked) {
    const { keys, options, redis } = this as unknown as Internals
    const item = String(itemId)
    const p = keys.partitionOf(item)
    const reply = (await oldToggleScript.run(
      redis,
      [
        oldLayoutKeys(keys, item).likes,
        keys.rankAll(p, 'likes'),
        keys.rankMinutePrefix(p, 'likes'),
        keys.stream(p),
      ],
      [
        String(userId),
        liked ? '1' : '0',
        item,
        toMember(item),
        'like',
        options.topK,
        '1',
        options.bucketTtlMs,
      ],
    )) as [number, number, string]
    return { changed: reply[0] === 1, active: liked, count: reply[1], eventId: reply[2] || undefined }
  }
  Interactions.prototype.recordPlay = async function (this: Interactions, itemId, viewer) {
    const { keys, options, redis } = this as unknown as Internals
    const item = String(itemId)
    const p = keys.partitionOf(item)
    const reply = (await oldPlayScript.run(
      redis,
      [
        `${oldLayoutKeys(keys, item).seenPrefix}${viewer}`,
        keys.plays(item),
        keys.rankAll(p, 'plays'),
        keys.rankMinutePrefix(p, 'plays'),
        keys.stream(p),
      ],
      [options.playDedupeWindowMs, item, toMember(item), viewer, options.topK, options.bucketTtlMs],
    )) as [number, number, string]
    return { counted: reply[0] === 1, count: reply[1], eventId: reply[2] || undefined }
  }
}
