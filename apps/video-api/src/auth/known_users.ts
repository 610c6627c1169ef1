import { CircuitBreaker } from 'floodgate'
import { LRUCache } from 'lru-cache'
import { fields } from '../config/fields.js'
import { isDatabaseUnreachable } from '../db/unreachable.js'

/** Options of {@link KnownUsers}. */
export interface KnownUsersOptions {
  /** Confirmed user ids kept in memory. @default 10000 */
  max?: number
  /** How long (ms) a confirmed id is trusted without asking the database again. @default the field table's `AUTH_KNOWN_USER_TTL_MS` */
  ttlMs?: number
  /** While the database cannot be reached: time (ms) between two lookups that probe it. @default 1000 */
  probeEveryMs?: number
  /** Told about every `unverified` answer, with the last error that made the database unreachable. */
  onUnverified?: (error: unknown) => void
}

/**
 * The answer of {@link KnownUsers.check}: `exists` (the database said so within `ttlMs`),
 * `missing` (it says no such user), `unverified` (it cannot be reached: the token's signature stands).
 */
export type UserCheck = 'exists' | 'missing' | 'unverified'

/**
 * Does the user of a validly signed token exist in the database? A small in-process LRU of
 * confirmed ids makes the answer free for active users; an unknown id is asked every time (not
 * cached), so a user registered a moment ago is never refused. A user deleted from the database
 * stays "known" for at most `ttlMs`.
 *
 * While the database cannot be reached (`isDatabaseUnreachable`), the answer is `unverified` and
 * the caller accepts the token alone: it is signed for this database (`aud`) and issued only to a
 * user the database had at login or registration, at most JWT_TTL_S ago, and the API deletes no
 * user. So writes that need Redis only keep working through an outage of any length; a user
 * deleted by hand can still write until the database is back or the token expires, and those
 * events fail the flush's foreign key and end in its dead-letter stream. After a lookup found the
 * database unreachable, lookups are skipped for `probeEveryMs`, then one probes it (floodgate's
 * `CircuitBreaker`, threshold 1): an outage costs one failed connection per `probeEveryMs`, not
 * one per write.
 */
export class KnownUsers {
  private readonly confirmed: LRUCache<string, true>
  private readonly breaker: CircuitBreaker
  private readonly onUnverified: ((error: unknown) => void) | undefined
  private lastUnreachable: unknown

  /** @throws {InvalidArgumentError} when `probeEveryMs` is not an integer ≥ 1. */
  constructor(
    private readonly lookup: (userId: string) => Promise<boolean>,
    options: KnownUsersOptions = {},
  ) {
    this.confirmed = new LRUCache({
      max: options.max ?? 10_000,
      ttl: options.ttlMs ?? Number(fields.authKnownUserTtlMs.default),
    })
    this.breaker = new CircuitBreaker({ failureThreshold: 1, coolDownMs: options.probeEveryMs ?? 1000 })
    this.onUnverified = options.onUnverified
  }

  /**
   * Whether the user exists, per the policy above.
   * @throws the lookup's error when it is not the database being unreachable (a bad statement).
   */
  async check(userId: string): Promise<UserCheck> {
    if (this.confirmed.get(userId)) return 'exists'
    if (!this.breaker.allow()) return this.unverified()
    let found: boolean
    try {
      found = await this.lookup(userId)
    } catch (error) {
      if (!isDatabaseUnreachable(error)) {
        this.breaker.inconclusive()
        throw error
      }
      this.breaker.failure()
      this.lastUnreachable = error
      return this.unverified()
    }
    this.breaker.success()
    if (found) this.confirmed.set(userId, true)
    return found ? 'exists' : 'missing'
  }

  private unverified(): 'unverified' {
    this.onUnverified?.(this.lastUnreachable)
    return 'unverified'
  }
}
