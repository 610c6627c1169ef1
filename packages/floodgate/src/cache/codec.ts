/**
 * Turns cached values into bytes and back. `decode` receives exactly the bytes
 * `encode` produced; it throws on input it cannot read (the cache then deletes
 * the entry and reloads it, emitting `corrupt`).
 */
export interface Codec<T = unknown> {
  encode(value: T): string | Buffer
  decode(raw: Buffer): T
}

/** The default codec: `JSON.stringify` / `JSON.parse` over UTF-8. */
export const jsonCodec: Codec<unknown> = {
  encode(value) {
    const text = JSON.stringify(value)
    if (text === undefined) throw new TypeError('value is not JSON-serializable')
    return text
  },
  decode(raw) {
    return JSON.parse(raw.toString('utf8')) as unknown
  },
}
