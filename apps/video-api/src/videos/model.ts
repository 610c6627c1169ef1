import type { VideoRow } from '../db/types.js'

/** Size of the recommendation feed (`GET /feed/recommend`). */
export const FEED_SIZE = 20

/** A video as the API returns it; ids are strings of digits, counts are numbers. */
export interface VideoView {
  id: string
  authorId: string
  title: string
  description: string
  coverUrl: string
  playUrl: string
  visibility: 'public' | 'private'
  status: 'draft' | 'published'
  likeCount: number
  favoriteCount: number
  playCount: number
  createdAt: string
  updatedAt: string
}

/** A live video as the repository returns it (readers never return deleted ones); same shape as the API view. */
export type Video = VideoView

export function toVideo(row: VideoRow): Video {
  return {
    id: String(row.id),
    authorId: String(row.author_id),
    title: row.title,
    description: row.description,
    coverUrl: row.cover_url,
    playUrl: row.play_url,
    visibility: row.visibility,
    status: row.status,
    likeCount: Number(row.like_count),
    favoriteCount: Number(row.favorite_count),
    playCount: Number(row.play_count),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  }
}

/** Visible to `viewerId`: published and public, or owned by the viewer. */
export function visibleTo(video: Video, viewerId: string | undefined): boolean {
  return (video.status === 'published' && video.visibility === 'public') || video.authorId === viewerId
}
