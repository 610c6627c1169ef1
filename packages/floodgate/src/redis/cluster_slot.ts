/**
 * Redis Cluster's key → slot mapping: CRC16 (XMODEM: poly 0x1021, init 0, no reflection, no final
 * XOR) of the key's hash tag, mod 16384. The hash tag is the part between the first `{` and the
 * next `}` when that is non-empty; otherwise the whole key.
 * Source: Redis Cluster specification, "Keys distribution model" and Appendix A
 * (https://redis.io/docs/reference/cluster-spec/); check value: CRC16 of "123456789" is 0x31C3.
 */
export const SLOT_COUNT = 16384

const table = (() => {
  const t = new Uint16Array(256)
  for (let i = 0; i < 256; i++) {
    let crc = i << 8
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    t[i] = crc
  }
  return t
})()

/**
 * CRC16/XMODEM of `bytes` (0 … 65535). With init 0 it is linear over GF(2): for equal-length
 * inputs `crc16(a XOR b) = crc16(a) XOR crc16(b)`, and leading zero bytes do not change it.
 */
export function crc16(bytes: Uint8Array): number {
  let crc = 0
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ (table[((crc >> 8) ^ byte) & 0xff] ?? 0)
  return crc
}

/** The part of `key` that Redis Cluster hashes (its hash tag, or the whole key), as bytes. */
export function hashTagOf(key: string | Buffer): Buffer {
  const bytes = typeof key === 'string' ? Buffer.from(key) : key
  const open = bytes.indexOf(0x7b) // {
  if (open < 0) return bytes
  const close = bytes.indexOf(0x7d, open + 1) // }
  if (close < 0 || close === open + 1) return bytes
  return bytes.subarray(open + 1, close)
}

/** The cluster slot (0 … 16383) of `key`. */
export function keySlot(key: string | Buffer): number {
  return crc16(hashTagOf(key)) % SLOT_COUNT
}
