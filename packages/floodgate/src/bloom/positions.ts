import { murmur3x86_128 } from './murmur3.js'

/** Where one item's bits live: a shard and `k` bit offsets inside it. */
export interface ItemBits {
  shard: number
  offsets: number[]
}

/**
 * Maps items to bit offsets by double hashing (Kirsch & Mitzenmacher, "Less
 * Hashing, Same Performance: Building a Better Bloom Filter", ESA 2006):
 * one MurmurHash3_x86_128 of the item's UTF-8 bytes gives four 32-bit words;
 * word 3 picks the shard (`mod shards`), words 0 and 1 are h1 and h2, and bit
 * `i` (0 ≤ i < k) sits at `(h1 + i·h2) mod bitsPerShard`. All k bits of an
 * item are in one shard, so one key (one command) answers for it.
 */
export class BitPositions {
  private readonly encoder = new TextEncoder()
  private buffer = new Uint8Array(256)
  private readonly words = new Uint32Array(4)

  constructor(
    readonly bitsPerShard: number,
    readonly hashes: number,
    readonly shards: number,
  ) {}

  of(item: string): ItemBits {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit
    if (item.length * 3 > this.buffer.length) this.buffer = new Uint8Array(item.length * 3)
    const { written } = this.encoder.encodeInto(item, this.buffer)
    const [h1, h2, , h3] = murmur3x86_128(this.buffer, written, 0, this.words)
    const m = this.bitsPerShard
    const step = h2! % m
    let offset = h1! % m
    const offsets = new Array<number>(this.hashes)
    for (let i = 0; i < this.hashes; i++) {
      offsets[i] = offset
      offset += step
      if (offset >= m) offset -= m
    }
    return { shard: h3! % this.shards, offsets }
  }
}
