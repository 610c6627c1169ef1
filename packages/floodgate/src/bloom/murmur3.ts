/**
 * MurmurHash3_x86_128 (Austin Appleby, public domain; reference
 * `MurmurHash3.cpp` in SMHasher). Pure 32-bit arithmetic (`Math.imul`), no
 * BigInt, so it is fast in V8. Checked against SMHasher's verification value
 * 0xB3ECE62A in the tests.
 */

const C1 = 0x239b961b
const C2 = 0xab0e9789
const C3 = 0x38b34ae5
const C4 = 0xa1e38b93

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r))
}

function fmix(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/**
 * Hashes `length` bytes of `data` into `out` as four unsigned 32-bit words
 * (h1..h4, the same words the reference writes as its 16 output bytes).
 */
export function murmur3x86_128(
  data: Uint8Array,
  length: number = data.length,
  seed = 0,
  out: Uint32Array = new Uint32Array(4),
): Uint32Array {
  let h1 = seed >>> 0
  let h2 = h1
  let h3 = h1
  let h4 = h1
  const blocks = length - (length & 15)
  for (let i = 0; i < blocks; i += 16) {
    let k1 = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24)
    let k2 = data[i + 4]! | (data[i + 5]! << 8) | (data[i + 6]! << 16) | (data[i + 7]! << 24)
    let k3 = data[i + 8]! | (data[i + 9]! << 8) | (data[i + 10]! << 16) | (data[i + 11]! << 24)
    let k4 = data[i + 12]! | (data[i + 13]! << 8) | (data[i + 14]! << 16) | (data[i + 15]! << 24)

    k1 = Math.imul(rotl(Math.imul(k1, C1), 15), C2)
    h1 ^= k1
    h1 = rotl(h1, 19) + h2
    h1 = (Math.imul(h1, 5) + 0x561ccd1b) | 0

    k2 = Math.imul(rotl(Math.imul(k2, C2), 16), C3)
    h2 ^= k2
    h2 = rotl(h2, 17) + h3
    h2 = (Math.imul(h2, 5) + 0x0bcaa747) | 0

    k3 = Math.imul(rotl(Math.imul(k3, C3), 17), C4)
    h3 ^= k3
    h3 = rotl(h3, 15) + h4
    h3 = (Math.imul(h3, 5) + 0x96cd1c35) | 0

    k4 = Math.imul(rotl(Math.imul(k4, C4), 18), C1)
    h4 ^= k4
    h4 = rotl(h4, 13) + h1
    h4 = (Math.imul(h4, 5) + 0x32ac3b17) | 0
  }

  const tail = length & 15
  let k1 = 0
  let k2 = 0
  let k3 = 0
  let k4 = 0
  const t = blocks
  if (tail > 12) {
    if (tail >= 15) k4 ^= data[t + 14]! << 16
    if (tail >= 14) k4 ^= data[t + 13]! << 8
    k4 ^= data[t + 12]!
    h4 ^= Math.imul(rotl(Math.imul(k4, C4), 18), C1)
  }
  if (tail > 8) {
    if (tail >= 12) k3 ^= data[t + 11]! << 24
    if (tail >= 11) k3 ^= data[t + 10]! << 16
    if (tail >= 10) k3 ^= data[t + 9]! << 8
    k3 ^= data[t + 8]!
    h3 ^= Math.imul(rotl(Math.imul(k3, C3), 17), C4)
  }
  if (tail > 4) {
    if (tail >= 8) k2 ^= data[t + 7]! << 24
    if (tail >= 7) k2 ^= data[t + 6]! << 16
    if (tail >= 6) k2 ^= data[t + 5]! << 8
    k2 ^= data[t + 4]!
    h2 ^= Math.imul(rotl(Math.imul(k2, C2), 16), C3)
  }
  if (tail > 0) {
    if (tail >= 4) k1 ^= data[t + 3]! << 24
    if (tail >= 3) k1 ^= data[t + 2]! << 16
    if (tail >= 2) k1 ^= data[t + 1]! << 8
    k1 ^= data[t]!
    h1 ^= Math.imul(rotl(Math.imul(k1, C1), 15), C2)
  }

  h1 ^= length
  h2 ^= length
  h3 ^= length
  h4 ^= length
  h1 = (h1 + h2 + h3 + h4) | 0
  h2 = (h2 + h1) | 0
  h3 = (h3 + h1) | 0
  h4 = (h4 + h1) | 0
  h1 = fmix(h1)
  h2 = fmix(h2)
  h3 = fmix(h3)
  h4 = fmix(h4)
  h1 = (h1 + h2 + h3 + h4) | 0
  h2 = (h2 + h1) | 0
  h3 = (h3 + h1) | 0
  h4 = (h4 + h1) | 0
  out[0] = h1
  out[1] = h2
  out[2] = h3
  out[3] = h4
  return out
}
