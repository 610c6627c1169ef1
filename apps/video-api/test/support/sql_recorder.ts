import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'

type Query = (this: unknown, ...args: unknown[]) => unknown

/**
 * Records the text of every statement any `pg` client or PGlite in this process sends, at the
 * driver (so also raw statements that bypass Kysely's plugins, such as floodgate's), until
 * {@link restore}. A test file is its own process, so the patch never leaks into other files.
 */
export class SqlRecorder {
  readonly statements: string[] = []
  private readonly restorers: (() => void)[] = []

  static install(): SqlRecorder {
    const recorder = new SqlRecorder()
    recorder.patch(pg.Client.prototype as unknown as { query: Query })
    recorder.patch(PGlite.prototype as unknown as { query: Query })
    return recorder
  }

  /** Statements recorded so far whose text matches `pattern`. */
  count(pattern: RegExp): number {
    return this.statements.filter((text) => pattern.test(text)).length
  }

  restore(): void {
    for (const undo of this.restorers.splice(0)) undo()
  }

  private patch(proto: { query: Query }): void {
    const original = proto.query
    const statements = this.statements
    proto.query = function (this: unknown, ...args: unknown[]) {
      const first = args[0]
      const text = typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text
      if (typeof text === 'string') statements.push(text)
      return original.apply(this, args)
    }
    this.restorers.push(() => {
      proto.query = original
    })
  }
}
