import type { CountsUnavailableReason, LiveCounts, LiveItemCounts } from 'floodgate'
import type { Video } from '../videos/model.js'

/** A video's JSON text around its counts: `{"id":…,"status":…` and `,"createdAt":…,"updatedAt":…}`. */
interface JsonPieces {
  head: string
  tail: string
  /**
   * The last answer without a viewer's flags and the counts it holds: counts change far less often
   * than a hot video is read, so most reads send this same string, already flat (Fastify measures
   * its UTF-8 length, which flattens a concatenated string, on every send).
   */
  last: CountedText | undefined
}

interface CountedText {
  likes: number
  favorites: number
  plays: number
  stale: boolean
  text: string
}

// Keyed by the video object: a cached video (an L1 entry, shared and never modified) is turned
// into text once, not on every request; an entry that leaves the cache takes its text with it.
const piecesByVideo = new WeakMap<Video, JsonPieces>()

function piecesOf(video: Video): JsonPieces {
  let pieces = piecesByVideo.get(video)
  if (pieces === undefined) {
    // the Video schema's fields, in its order: nothing else of the object reaches the client
    const head = JSON.stringify({
      id: video.id,
      authorId: video.authorId,
      title: video.title,
      description: video.description,
      coverUrl: video.coverUrl,
      playUrl: video.playUrl,
      visibility: video.visibility,
      status: video.status,
    })
    const tail = JSON.stringify({ createdAt: video.createdAt, updatedAt: video.updatedAt })
    pieces = { head: head.slice(0, -1), tail: `,${tail.slice(1)}`, last: undefined }
    piecesByVideo.set(video, pieces)
  }
  return pieces
}

/**
 * The JSON answer of one video (the API's `Video` schema) with its live counts, as
 * {@link withCounts} would give it, without copying the video or serializing it again: the
 * text of its other fields is kept per video object. `video` must not be modified afterwards
 * (cache entries are not).
 */
export async function countedVideoJson(
  live: LiveCounts,
  video: Video,
  viewerId: string | undefined,
  onStale?: (reason: CountsUnavailableReason) => void,
): Promise<string> {
  const read = await live.read([video.id], viewerId)
  if (read.unavailable) onStale?.(read.unavailable)
  return jsonWithCounts(video, read.counts.get(video.id), viewerId)
}

/**
 * {@link countedVideoJson}'s text, synchronously, when the live counts answer in process
 * ({@link LiveCounts.peek}: fresh anonymous counts); `undefined` when they need a read.
 */
export function localVideoJson(
  live: LiveCounts,
  video: Video,
  viewerId: string | undefined,
): string | undefined {
  const c = live.peek(video.id, viewerId)
  return c === undefined ? undefined : jsonWithCounts(video, c, viewerId)
}

/** The text of `video` with counts `c`. Numbers are finite integers (counts), so plain `${n}` is their JSON. */
function jsonWithCounts(video: Video, c: LiveItemCounts | undefined, viewerId: string | undefined): string {
  const pieces = piecesOf(video)
  const { head, tail } = pieces
  // nobody could answer (Redis and the database failed): the payload's own columns, stale
  if (!c)
    return `${head},"likeCount":${video.likeCount},"favoriteCount":${video.favoriteCount},"playCount":${video.playCount},"countsStale":true${tail}`
  const stale = c.stale ? ',"countsStale":true' : ''
  if (viewerId !== undefined && c.liked !== undefined)
    return `${head},"likeCount":${c.likes},"favoriteCount":${c.favorites},"playCount":${c.plays},"liked":${c.liked},"favorited":${c.favorited === true}${stale}${tail}`
  const last = pieces.last
  if (
    last !== undefined &&
    last.likes === c.likes &&
    last.favorites === c.favorites &&
    last.plays === c.plays &&
    last.stale === c.stale
  )
    return last.text
  const text = `${head},"likeCount":${c.likes},"favoriteCount":${c.favorites},"playCount":${c.plays}${stale}${tail}`
  pieces.last = { likes: c.likes, favorites: c.favorites, plays: c.plays, stale: c.stale, text }
  return text
}
