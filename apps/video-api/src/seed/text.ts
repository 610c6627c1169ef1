import type { Prng } from './prng.js'

const words = (
  'cat dog city night rain coffee street food travel music guitar piano dance workout morning sunset ' +
  'beach mountain snow cooking recipe noodles dumplings tutorial review unboxing vlog day life study ' +
  'coding game speedrun funny prank challenge build repair garden plants bike car drone timelapse ' +
  'ocean river forest camping hiking painting drawing makeup fashion thrift haul budget tips secret ' +
  'easy quick best first last new old tiny giant happy sad weird calm wild golden blue red green'
).split(' ')

/** Words until the sentence reaches about `length` characters (never above `max`). */
export function sentence(prng: Prng, length: number, max: number): string {
  let out = ''
  while (out.length < length) {
    const word = prng.pick(words)
    const next = out.length === 0 ? word[0]!.toUpperCase() + word.slice(1) : `${out} ${word}`
    if (next.length > max) break
    out = next
  }
  return out
}

/** A title of 12–80 characters, most around 30–50 (sum of two uniforms: triangular). */
export function title(prng: Prng): string {
  return sentence(prng, Math.round(12 + ((prng.next() + prng.next()) / 2) * 68), 100)
}

/** A description: 20 % empty, else mostly short with a long tail (up to 2,000 characters). */
export function description(prng: Prng): string {
  if (prng.next() < 0.2) return ''
  const length = Math.min(2000, Math.round(20 * Math.exp(prng.next() * 4.6)))
  return `${sentence(prng, length, 5000)}.`
}
