import pg from 'pg'

/** URL of the shared PostgreSQL the tests and the bench use (each user makes its own schema). */
export const TEST_DATABASE_URL =
  process.env.FLOODGATE_TEST_DATABASE_URL ??
  process.env.FLOODGATE_TEST_PG_URL ??
  'postgres://postgres@127.0.0.1:5432/test'

/** Runs `DROP SCHEMA IF EXISTS "<schema>" CASCADE` on its own connection to `url`. */
export async function dropSchema(schema: string, url: string = TEST_DATABASE_URL): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}
