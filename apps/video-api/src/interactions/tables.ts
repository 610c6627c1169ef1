import type { InteractionTables } from 'floodgate'

/**
 * video-api's interaction schema (migrations 0001 and 0002): `videos(id, like_count, …)`, the
 * detail tables keyed by `video_id`, and the watermarks. Passed explicitly wherever the library
 * reads or writes these tables, so the service does not rest on the library's defaults.
 */
export const videoInteractionTables: Readonly<InteractionTables> = Object.freeze({
  items: Object.freeze({
    table: 'videos',
    id: 'id',
    likeCount: 'like_count',
    favoriteCount: 'favorite_count',
    playCount: 'play_count',
    // a soft-deleted video: left out of rebuilds and reconcile (its Redis state is forgotten)
    deletedAt: 'deleted_at',
  }),
  itemIdColumn: 'video_id',
  likes: 'video_likes',
  favorites: 'video_favorites',
  plays: 'video_plays',
  watermarks: 'interaction_watermarks',
})
