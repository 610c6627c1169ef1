import { type Kysely, sql } from 'kysely'

/** Users, videos, interaction detail tables (filled by the counters issue) and the seeded popularity rank. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table users (
      id bigserial primary key,
      username text not null unique check (char_length(username) between 3 and 32),
      password_hash text not null,
      created_at timestamptz not null default now()
    )`.execute(db)
  await sql`
    create table videos (
      id bigserial primary key,
      author_id bigint not null references users (id),
      title varchar(100) not null check (char_length(title) >= 1),
      description varchar(5000) not null default '',
      cover_url varchar(2048) not null,
      play_url varchar(2048) not null,
      visibility text not null default 'public' check (visibility in ('public', 'private')),
      status text not null default 'draft' check (status in ('draft', 'published')),
      like_count bigint not null default 0,
      favorite_count bigint not null default 0,
      play_count bigint not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      deleted_at timestamptz
    )`.execute(db)
  // Feed: latest published public live videos.
  await sql`
    create index videos_feed_idx on videos (created_at desc, id desc)
    where deleted_at is null and status = 'published' and visibility = 'public'`.execute(db)
  // Author lists (owner view; the public view filters on top of the same order).
  await sql`
    create index videos_author_idx on videos (author_id, created_at desc, id desc)
    where deleted_at is null`.execute(db)
  for (const table of ['video_likes', 'video_favorites']) {
    await sql`
      create table ${sql.table(table)} (
        video_id bigint not null references videos (id),
        user_id bigint not null references users (id),
        created_at timestamptz not null default now(),
        primary key (video_id, user_id)
      )`.execute(db)
    await sql`create index ${sql.id(`${table}_user_idx`)} on ${sql.table(table)} (user_id, created_at desc)`.execute(
      db,
    )
  }
  await sql`
    create table video_plays (
      event_id text primary key,
      video_id bigint not null references videos (id),
      viewer text not null,
      played_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index video_plays_video_idx on video_plays (video_id, played_at desc)`.execute(db)
  await sql`
    create table video_popularity (
      video_id bigint primary key references videos (id),
      rank integer not null
    )`.execute(db)
  await sql`create index video_popularity_rank_idx on video_popularity (rank)`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'video_popularity',
    'video_plays',
    'video_favorites',
    'video_likes',
    'videos',
    'users',
  ]) {
    await sql`drop table if exists ${sql.table(table)}`.execute(db)
  }
}
