/**
 * Log line i's text in log_destination.test.ts: 1- to 4-byte UTF-8 characters, 0–4 KB; every 7th
 * line 9,000 three-byte characters (27 KB, near the destination's buffer), every 50th 40,000 characters.
 */
export function wideText(i: number): string {
  const body =
    i % 50 === 0 ? 'ü'.repeat(40_000) : i % 7 === 0 ? '€'.repeat(9_000) : 'ü'.repeat((i * 131) % 2_000)
  return `é€🎬 ${i} ${body}`
}
