/** A Redis stream id `<ms>-<seq>` split into its two numbers (as bigints: both are 64-bit). */
export interface StreamIdParts {
  ms: bigint
  seq: bigint
}

const ID = /^(\d{1,20})-(\d{1,20})$/

/** Parses `<ms>-<seq>`; `undefined` when `id` does not have that shape. */
export function parseStreamId(id: string): StreamIdParts | undefined {
  const match = ID.exec(id)
  if (!match) return undefined
  return { ms: BigInt(match[1]!), seq: BigInt(match[2]!) }
}

/**
 * Orders two stream ids numerically, by milliseconds then sequence (never as
 * strings: `"9-0"` is older than `"10-0"`). Negative, zero or positive.
 * @throws {TypeError} when either id is malformed.
 */
export function compareStreamIds(a: string, b: string): number {
  const x = parseStreamId(a)
  const y = parseStreamId(b)
  if (!x || !y) throw new TypeError(`malformed stream id: ${x ? b : a}`)
  if (x.ms !== y.ms) return x.ms < y.ms ? -1 : 1
  if (x.seq !== y.seq) return x.seq < y.seq ? -1 : 1
  return 0
}
