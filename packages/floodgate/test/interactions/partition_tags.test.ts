// Issue 26: the interaction partitions' hash tags land on evenly spaced slots, pinned so the
// layout cannot drift, and with the default partition count every master of an evenly split
// cluster (M = 3, 6, 10, 30, 100) carries the same share of the write path.
import { createHash } from 'node:crypto'
import { spreadOver } from '@floodgate/test-support'
import { describe, expect, it } from 'vitest'
import { restoredKey } from '../../src/counters/restore_markers.js'
import { INTERACTION_DEFAULTS, InteractionKeys } from '../../src/index.js'
import { decayedKey } from '../../src/rankings/ranking_keys.js'
import { crc16, keySlot } from '../support/key_slot.js'

/** Tags of the default layout (P = 300), some by partition and a digest of all 300 joined by commas. */
const PINNED_300: Record<number, string> = {
  0: 'ix:0.aaqu',
  1: 'ix:1.bfgg',
  7: 'ix:7.bhto',
  299: 'ix:299.bivl',
}
const PINNED_300_SHA256 = '63700a7e830e39a4bae5839afef28e31fe16eb097aab1dbf2ddb84b15c5e45a3'
const PINNED_16_5 = 'ix:5.bfiy'

/** Partition p's slot: the middle of its even share of 0 … 16383. */
const target = (p: number, partitions: number) => Math.floor(((p + 0.5) * 16384) / partitions)

/** The tag by its definition, one suffix at a time: `ix:<p>.` + the first of aaaa … zzzz in `slot`. */
function searchTag(p: number, slot: number): string {
  for (let i = 0; i < 26 ** 4; i++) {
    const suffix = [3, 2, 1, 0].map((k) => String.fromCharCode(97 + (Math.floor(i / 26 ** k) % 26))).join('')
    const tag = `ix:${p}.${suffix}`
    if (keySlot(tag) === slot) return tag
  }
  throw new Error(`no tag for slot ${slot}`)
}

describe('interaction partition tags', () => {
  it('uses Redis Cluster CRC16 (XMODEM): the specification check value', () => {
    expect(crc16(Buffer.from('123456789'))).toBe(0x31c3)
  })

  it('puts partition p of P on slot floor((p + 0.5) · 16384 / P), for P = 1, 16, 300, 16384', () => {
    for (const partitions of [1, 16, 300, 16384]) {
      const keys = new InteractionKeys('pt', partitions)
      const slots = keys.allPartitions().map((p) => keySlot(keys.stream(p)))
      expect(slots).toEqual(keys.allPartitions().map((p) => target(p, partitions)))
      expect(new Set(keys.allPartitions().map((p) => keys.tagOf(p))).size).toBe(partitions)
    }
  })

  it('is the first four-letter suffix in order that lands there (the definition, searched one by one)', () => {
    const keys = new InteractionKeys('pt', 300)
    for (const p of [0, 1, 150, 299]) expect(keys.tagOf(p)).toBe(searchTag(p, target(p, 300)))
    const one = new InteractionKeys('pt', 1)
    expect(one.tagOf(0)).toBe(searchTag(0, 8192))
  })

  it('is pinned: the default layout cannot drift', () => {
    const keys = new InteractionKeys('pt')
    expect(keys.partitions).toBe(300)
    expect(Object.fromEntries(Object.keys(PINNED_300).map((p) => [p, keys.tagOf(Number(p))]))).toEqual(
      PINNED_300,
    )
    const all = keys.allPartitions().map((p) => keys.tagOf(p))
    expect(createHash('sha256').update(all.join(',')).digest('hex')).toBe(PINNED_300_SHA256)
    expect(keys.likes('307')).toBe(`pt:ix:{${PINNED_300[7]}}:likes:307`)
    expect(new InteractionKeys('pt', 16).tagOf(5)).toBe(PINNED_16_5)
  })

  it('finds the tags of any partition count fast, and once', () => {
    const started = performance.now()
    const big = new InteractionKeys('pt', 16384)
    expect(performance.now() - started).toBeLessThan(2000)
    expect(keySlot(big.stream(12345))).toBe(12345)
    const again = performance.now()
    for (let i = 0; i < 100; i++) new InteractionKeys('pt', 16384)
    expect(performance.now() - again).toBeLessThan(50)
  })

  it('refuses a partition outside 0 … P − 1', () => {
    const keys = new InteractionKeys('pt', 16)
    expect(() => keys.tagOf(16)).toThrow(RangeError)
    expect(() => keys.tagOf(-1)).toThrow(RangeError)
  })

  it('keeps every key of an item, its stream and its ranking shards in one slot', () => {
    const keys = new InteractionKeys('pt')
    for (const item of ['1', '299', '300', '123456789012345678901']) {
      const p = keys.partitionOf(item)
      const all = [
        keys.likes(item),
        keys.favorites(item),
        keys.plays(item),
        keys.playSeenPrefix(item),
        keys.stream(p),
        keys.dead(p),
        keys.rankAll(p, 'likes'),
        keys.rankMinute(p, 'plays', 29_000_000),
        decayedKey(keys, p, 'plays', '24h'),
        restoredKey(keys, p),
      ]
      expect(new Set(all.map((k) => keySlot(k)))).toEqual(new Set([target(p, keys.partitions)]))
      expect(keys.countedItemOf(keys.likes(item))).toBe(item)
    }
  })

  it('spreads equal partitions evenly over 3, 6, 10, 30 and 100 masters with the defaults', () => {
    const keys = new InteractionKeys('pt', INTERACTION_DEFAULTS.partitions)
    const loads = new Map(keys.allPartitions().map((p) => [keySlot(keys.stream(p)), 1]))
    for (const masters of [3, 6, 10, 30, 100]) {
      const spread = spreadOver(masters, loads)
      expect({ masters, idle: spread.idle }).toEqual({ masters, idle: 0 })
      expect(spread.maxOverMean).toBeLessThanOrEqual(1.15)
    }
  })
})
