import { isIPv4, isIPv6 } from 'node:net'

/**
 * The rate-limit key of a client address: an IPv4 address as is (`ip:203.0.113.7`), an
 * IPv6 address grouped by its /64 prefix (`ip6:2001:db8:0:1::/64`), since one
 * subscriber usually holds a whole /64 and rotating the low 64 bits is free. An
 * IPv4-mapped IPv6 address (`::ffff:203.0.113.7`) counts as its IPv4 address.
 */
export function addressKey(ip: string): string {
  // per request: the common forms first, without a regex. With no ':' it is no IPv6 address and,
  // with no zone id, the text is the key as is (what the checks below give, isIPv4 or not).
  if (!ip.includes(':')) {
    if (!ip.includes('%')) return `ip:${ip}`
  } else if (ip.startsWith(MAPPED_PREFIX) && isDottedQuad(ip, MAPPED_PREFIX.length)) {
    return `ip:${ip.slice(MAPPED_PREFIX.length)}` // a dual-stack listener's IPv4 client
  }
  const address = ip.replace(/%.*$/, '') // zone id
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return `ip:${mapped[1]}`
  if (isIPv4(address)) return `ip:${address}`
  if (isIPv6(address)) return `ip6:${ipv6Groups(address).slice(0, 4).join(':')}::/64`
  return `ip:${address}`
}

const MAPPED_PREFIX = '::ffff:'
const DOT = 46
const ZERO = 48
const NINE = 57

/** Whether `text` from `from` on is four runs of ASCII digits joined by dots (`/^\d+\.\d+\.\d+\.\d+$/`). */
function isDottedQuad(text: string, from: number): boolean {
  let dots = 0
  let digits = 0
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= ZERO && c <= NINE) digits++
    else if (c === DOT && digits > 0 && dots < 3) {
      dots++
      digits = 0
    } else return false
  }
  return dots === 3 && digits > 0
}

/** The eight 16-bit groups of an IPv6 address, lower-case hex without leading zeros. */
export function ipv6Groups(address: string): string[] {
  let text = address.toLowerCase()
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const zeros = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0')
  return [...left, ...zeros, ...right].map((group) => Number.parseInt(group, 16).toString(16))
}
