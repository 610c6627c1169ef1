/**
 * The part of pg-copy-streams' `from` the adapter uses: `from('COPY … FROM STDIN')` makes a
 * writable stream that a `pg` client runs with `client.query(stream)`. Structural, so the library
 * needs no `pg-copy-streams` dependency: the application passes `from` in.
 */
export type PgCopyFrom = (statement: string) => PgCopyStream

/** A pg-copy-streams `CopyStreamQuery`: a Writable that `pg` submits like a query. */
export interface PgCopyStream {
  end(chunk: string, callback?: () => void): unknown
  on(event: 'finish' | 'error', listener: (error?: Error) => void): unknown
}

/**
 * Runs `statement` (`COPY … FROM STDIN`) on `client` with `data` as its whole input (COPY text
 * format: rows end in `\n`). Resolves once PostgreSQL acknowledged the COPY.
 * @throws the driver's error (a malformed row, a missing table) unchanged.
 */
export function copyFromText(
  client: unknown,
  from: PgCopyFrom,
  statement: string,
  data: string,
): Promise<void> {
  const stream = (client as { query(stream: PgCopyStream): PgCopyStream }).query(from(statement))
  return new Promise((resolve, reject) => {
    stream.on('error', (error) => reject(error))
    stream.on('finish', () => resolve())
    stream.end(data)
  })
}
