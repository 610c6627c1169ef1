/**
 * The keys an invalidation message names (RESP2 `REDIRECT`: the message payload is an array of key
 * names), or `null` for the flush-all message (null payload, sent on FLUSHALL / FLUSHDB). A payload
 * of another shape (a bulk string, from a client publishing on the channel by hand) is read as one key.
 */
export function invalidatedKeys(message: unknown): string[] | null {
  if (message === null || message === undefined) return null
  if (Array.isArray(message)) return message.map((key) => String(key))
  return [String(message)]
}
