import { describe, expect, it } from 'vitest'
import { murmur3x86_128 } from '../../src/bloom/murmur3.js'
import { BitPositions, bloomSize, defaultShards, expectedFalsePositiveRate } from '../../src/index.js'

describe('MurmurHash3_x86_128', () => {
  it("matches SMHasher's verification value 0xB3ECE62A", () => {
    // SMHasher VerificationTest: hash keys {0}, {0,1}, … of length 0..255 with seed 256 − len,
    // hash the 256 concatenated results with seed 0, read the first 4 bytes little-endian
    const key = new Uint8Array(256)
    const all = new Uint8Array(256 * 16)
    const view = new DataView(all.buffer)
    for (let i = 0; i < 256; i++) {
      key[i] = i
      const h = murmur3x86_128(key, i, 256 - i)
      for (let j = 0; j < 4; j++) view.setUint32(i * 16 + j * 4, h[j]!, true)
    }
    expect(murmur3x86_128(all, all.length, 0)[0]).toBe(0xb3ece62a)
  })

  it('is 0 for the empty input with seed 0', () => {
    expect([...murmur3x86_128(new Uint8Array(0))]).toEqual([0, 0, 0, 0])
  })
})

describe('sizing', () => {
  it('m = −n ln p / (ln 2)², k = (m/n) ln 2', () => {
    expect(bloomSize(20_000, 0.01)).toEqual({ bits: 191_702, hashes: 7 })
    // the documented defaults: about 10 million bits and 7 hashes for 1 million keys at 1 %
    expect(bloomSize(1_000_000, 0.01)).toEqual({ bits: 9_585_059, hashes: 7 })
    expect(bloomSize(1000, 0.001).hashes).toBe(10)
  })

  it('the expected rate at n items is about p', () => {
    const { bits, hashes } = bloomSize(20_000, 0.01)
    expect(expectedFalsePositiveRate(bits, hashes, 20_000)).toBeCloseTo(0.01, 3)
    expect(expectedFalsePositiveRate(bits, hashes, 0)).toBe(0)
  })

  it('one shard per 2^23 bits by default', () => {
    expect(defaultShards(191_702)).toBe(1)
    expect(defaultShards(2 ** 23)).toBe(1)
    expect(defaultShards(10_000_000)).toBe(2)
  })

  it('rejects impossible sizes', () => {
    expect(() => bloomSize(0, 0.01)).toThrow(/expectedItems/)
    expect(() => bloomSize(10, 1)).toThrow(/falsePositiveRate/)
  })
})

describe('BitPositions', () => {
  it('gives k offsets in range, in one shard, the same every time', () => {
    const positions = new BitPositions(1009, 7, 4)
    const shardsSeen = new Set<number>()
    for (let i = 0; i < 2000; i++) {
      const { shard, offsets } = positions.of(`item:${i}`)
      shardsSeen.add(shard)
      expect(offsets).toHaveLength(7)
      for (const offset of offsets)
        expect(offset >= 0 && offset < 1009 && Number.isInteger(offset)).toBe(true)
      expect(positions.of(`item:${i}`)).toEqual({ shard, offsets })
    }
    expect(shardsSeen.size).toBe(4)
  })

  it('hashes non-ASCII and long items by their UTF-8 bytes', () => {
    const positions = new BitPositions(1 << 20, 5, 1)
    expect(positions.of('é')).not.toEqual(positions.of('e'))
    const long = 'ü'.repeat(1000)
    expect(positions.of(long)).toEqual(positions.of(long))
  })
})
