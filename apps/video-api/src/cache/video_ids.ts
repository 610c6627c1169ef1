import type { Kysely } from 'kysely'
import type { Database } from '../db/types.js'

/**
 * Every live video id, in chunks of `chunkSize`, by keyset pagination on the
 * primary key (no OFFSET): the Bloom filter's rebuild source.
 */
export async function* liveVideoIds(db: Kysely<Database>, chunkSize = 5000): AsyncGenerator<string[]> {
  let after = '0'
  for (;;) {
    const rows = await db
      .selectFrom('videos')
      .select('id')
      .where('id', '>', after)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .limit(chunkSize)
      .execute()
    if (rows.length === 0) return
    yield rows.map((row) => String(row.id))
    after = String(rows[rows.length - 1]!.id)
    if (rows.length < chunkSize) return
  }
}
