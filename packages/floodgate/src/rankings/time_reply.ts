/** A `TIME` reply (`[seconds, microseconds]`, strings) as Unix epoch ms, rounded down. */
export function timeReplyMs(reply: unknown): number {
  const [seconds, micros] = reply as [string, string]
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
}
