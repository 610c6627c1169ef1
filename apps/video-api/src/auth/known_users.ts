import { LRUCache } from 'lru-cache'

/** Options of {@link KnownUsers}. */
export interface KnownUsersOptions {
  /** Confirmed user ids kept in memory. @default 10000 */
  max?: number
  /** How long (ms) a confirmed id is trusted without asking the database again. @default 60000 */
  ttlMs?: number
}

/**
 * Does a user id (from a validly signed token) exist in the database? A small
 * in-process LRU of confirmed ids makes the answer free for active users; an
 * unknown id is asked every time (not cached), so a user registered a moment
 * ago is never refused. A user deleted from the database stays "known" for at
 * most `ttlMs`.
 */
export class KnownUsers {
  private readonly confirmed: LRUCache<string, true>

  constructor(
    private readonly lookup: (userId: string) => Promise<boolean>,
    options: KnownUsersOptions = {},
  ) {
    this.confirmed = new LRUCache({ max: options.max ?? 10_000, ttl: options.ttlMs ?? 60_000 })
  }

  /** True when the user exists. @throws the lookup's error (database unavailable). */
  async exists(userId: string): Promise<boolean> {
    if (this.confirmed.get(userId)) return true
    const found = await this.lookup(userId)
    if (found) this.confirmed.set(userId, true)
    return found
  }
}
