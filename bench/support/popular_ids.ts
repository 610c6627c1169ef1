import pg from 'pg'

/**
 * Ids of the seeded catalog's published public live videos, most popular first (the seeded
 * `video_popularity` rank), so every `GET /videos/:id` of them is a 200.
 */
export async function popularIds(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ id: string }>(`
      select v.id::text as id from video_popularity p join videos v on v.id = p.video_id
      where v.deleted_at is null and v.status = 'published' and v.visibility = 'public'
      order by p.rank`)
    return rows.map((r) => r.id)
  } finally {
    await client.end()
  }
}
