import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'

/** bigint columns come back from `pg` as strings; ids stay strings of digits end to end. */
type BigId = ColumnType<string, string | number | bigint, string | number | bigint>
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>
type Count = ColumnType<string | number, number | undefined, number>

export interface UsersTable {
  id: Generated<string>
  username: string
  password_hash: string
  created_at: Generated<Date>
}

export interface VideosTable {
  id: Generated<string>
  author_id: BigId
  title: string
  description: string
  cover_url: string
  play_url: string
  visibility: 'public' | 'private'
  status: 'draft' | 'published'
  like_count: Count
  favorite_count: Count
  play_count: Count
  created_at: Timestamp
  updated_at: Timestamp
  deleted_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
}

export interface VideoLikesTable {
  video_id: BigId
  user_id: BigId
  created_at: Timestamp
}

export interface VideoPlaysTable {
  event_id: string
  video_id: BigId
  viewer: string
  played_at: Timestamp
}

/** Seeded popularity rank (1 = hottest), Zipf-distributed; what benchmarks use to pick hot keys. */
export interface VideoPopularityTable {
  video_id: BigId
  rank: number
}

/** One row (migration 0003): this database's random installation id, the audience of its tokens. */
export interface ServiceMetaTable {
  one: ColumnType<boolean, never, never>
  installation_id: string
}

export interface Database {
  users: UsersTable
  videos: VideosTable
  video_likes: VideoLikesTable
  video_favorites: VideoLikesTable
  video_plays: VideoPlaysTable
  video_popularity: VideoPopularityTable
  service_meta: ServiceMetaTable
}

export type UserRow = Selectable<UsersTable>
export type VideoRow = Selectable<VideosTable>
export type NewVideo = Insertable<VideosTable>
