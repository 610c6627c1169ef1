import type { BitPositions } from './positions.js'

/**
 * A filter's bits in process memory: one bitmap per shard in Redis's bit order
 * (offset 0 is the most significant bit of byte 0), so a shard's bytes are
 * exactly what GET returns and SET writes. m / 8 bytes in all.
 */
export class ShardBitmaps {
  private readonly bitmaps: Uint8Array[]

  /** Zeroed bitmaps, or `bitmaps` as they are (one per shard, ⌈bitsPerShard / 8⌉ bytes each). */
  constructor(
    private readonly positions: BitPositions,
    shards: number,
    bitsPerShard: number,
    bitmaps?: Uint8Array[],
  ) {
    this.bitmaps =
      bitmaps ?? Array.from({ length: shards }, () => new Uint8Array(Math.ceil(bitsPerShard / 8)))
  }

  /** Sets the k bits of every item. */
  addAll(items: readonly string[]): void {
    for (const item of items) {
      const { shard, offsets } = this.positions.of(item)
      const bitmap = this.bitmaps[shard]!
      for (const offset of offsets) bitmap[offset >>> 3]! |= 0x80 >>> (offset & 7)
    }
  }

  /** False when some bit of `item` is clear (definitely absent); true when all k are set. */
  has(item: string): boolean {
    const { shard, offsets } = this.positions.of(item)
    const bitmap = this.bitmaps[shard]!
    for (const offset of offsets) if ((bitmap[offset >>> 3]! & (0x80 >>> (offset & 7))) === 0) return false
    return true
  }

  shard(shard: number): Uint8Array {
    return this.bitmaps[shard]!
  }
}
