import { randomUUID } from 'node:crypto'
import { type Kysely, sql } from 'kysely'

/**
 * `service_meta`: one row holding this database's `installation_id`, a random
 * UUID created once here. Bearer tokens carry it as their audience (`aud`), so a
 * token issued against one database is refused by an instance on another (or
 * on this one after a reset), even with the same JWT secret.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table service_meta (
      one boolean primary key default true check (one),
      installation_id text not null
    )`.execute(db)
  await sql`insert into service_meta (installation_id) values (${randomUUID()})`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists service_meta`.execute(db)
}
