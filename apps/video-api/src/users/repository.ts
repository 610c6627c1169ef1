import type { Kysely } from 'kysely'
import type { Database } from '../db/types.js'

export interface UserRecord {
  id: string
  username: string
  passwordHash: string
}

/** SQL for users. */
export class UserRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    const row = await this.db
      .selectFrom('users')
      .select(['id', 'username', 'password_hash'])
      .where('username', '=', username)
      .executeTakeFirst()
    return row ? { id: String(row.id), username: row.username, passwordHash: row.password_hash } : undefined
  }

  async exists(id: string): Promise<boolean> {
    const row = await this.db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()
    return row !== undefined
  }

  /** Inserts a user; `undefined` when the username is taken. */
  async create(
    username: string,
    passwordHash: string,
  ): Promise<{ id: string; createdAt: string } | undefined> {
    const row = await this.db
      .insertInto('users')
      .values({ username, password_hash: passwordHash })
      .onConflict((oc) => oc.column('username').doNothing())
      .returning(['id', 'created_at'])
      .executeTakeFirst()
    return row ? { id: String(row.id), createdAt: new Date(row.created_at).toISOString() } : undefined
  }
}
