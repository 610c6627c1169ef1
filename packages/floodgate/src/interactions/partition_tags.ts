import { crc16, SLOT_COUNT } from '../redis/cluster_slot.js'

/**
 * Hash tags of the interaction partitions, spread evenly over Redis Cluster's 16,384 slots.
 *
 * Partition `p` of `P` gets the slot nearest the middle of its even share of 0 … 16383,
 * {@link targetSlot}`(p, P) = floor((p + 0.5) · 16384 / P)`, so on a cluster whose masters hold
 * even slot ranges (what `redis-cli --cluster create` makes) every master serves
 * `floor(P/M)` or `ceil(P/M)` partitions, and with `M` dividing `P` exactly `P/M`.
 *
 * The tag of `p` is `ix:<p>.<s>` where `<s>` is the first string of four lower-case letters in
 * lexicographic order (`aaaa`, `aaab`, … `zzzz`) for which CRC16(tag) mod 16384 is that slot:
 * a deterministic search, pinned by test/interactions/partition_tags.test.ts so the layout cannot
 * drift. It is computed without trying suffixes one by one: CRC16 with init 0 is linear over
 * GF(2), so `crc16(B ‖ S) = crc16(B ‖ 0000) XOR crc16(S)` for a 4-byte `S`; one table (built once
 * per process, ≤ 456,976 four-byte CRCs, a few ms) maps each 14-bit value `crc16(S) mod 16384` to
 * the first `S` giving it, and the tag of `p` is one lookup at `target XOR (crc16(B ‖ 0000) mod 16384)`.
 * Tags of a partition count are cached, so building many {@link InteractionKeys} costs nothing.
 */

const LETTERS = 26
const SUFFIX_LENGTH = 4
const A = 0x61 // 'a'

/** First suffix (as its index in lexicographic order) per 14-bit CRC value; built on first use. */
let firstSuffixOfSlot: Int32Array | undefined
const tagsByPartitions = new Map<number, readonly string[]>()

/** The slot partition `p` of `partitions` aims at: the middle of its even share (0 … 16383). */
export function targetSlot(p: number, partitions: number): number {
  return Math.floor(((p + 0.5) * SLOT_COUNT) / partitions)
}

/**
 * The hash tags of partitions 0 … `partitions` − 1 (without braces), e.g. `ix:0.aqzk`; the same
 * array for the same count (cached). `partitions` is an integer in [1, 16384] (checked by
 * {@link InteractionKeys}).
 */
export function partitionTags(partitions: number): readonly string[] {
  let tags = tagsByPartitions.get(partitions)
  if (tags === undefined) {
    tags = Object.freeze(Array.from({ length: partitions }, (_, p) => tagFor(p, targetSlot(p, partitions))))
    tagsByPartitions.set(partitions, tags)
  }
  return tags
}

/** `ix:<p>.<s>` with the first suffix `s` whose tag lands in `slot`. */
function tagFor(p: number, slot: number): string {
  const head = Buffer.from(`ix:${p}.`)
  const base = crc16(Buffer.concat([head, Buffer.alloc(SUFFIX_LENGTH)])) % SLOT_COUNT
  // both below 16384, so the XOR is a slot too
  const index = suffixTable()[slot ^ base] ?? -1
  // unreachable: every 14-bit value has a suffix (the pinning test checks the table is full)
  if (index < 0) throw new Error(`no ${SUFFIX_LENGTH}-letter suffix reaches slot ${slot}`)
  return `ix:${p}.${suffixAt(index, Buffer.alloc(SUFFIX_LENGTH)).toString('latin1')}`
}

function suffixTable(): Int32Array {
  if (firstSuffixOfSlot !== undefined) return firstSuffixOfSlot
  const table = new Int32Array(SLOT_COUNT).fill(-1)
  let missing = SLOT_COUNT
  const total = LETTERS ** SUFFIX_LENGTH
  const bytes = Buffer.alloc(SUFFIX_LENGTH)
  for (let index = 0; index < total && missing > 0; index++) {
    const slot = crc16(suffixAt(index, bytes)) % SLOT_COUNT
    if (table[slot] === -1) {
      table[slot] = index
      missing--
    }
  }
  firstSuffixOfSlot = table
  return table
}

/** Writes the suffix of lexicographic rank `index` (0 = `aaaa`) into `bytes`; returns it. */
function suffixAt(index: number, bytes: Buffer): Buffer {
  for (let i = SUFFIX_LENGTH - 1, rest = index; i >= 0; i--, rest = Math.floor(rest / LETTERS)) {
    bytes[i] = A + (rest % LETTERS)
  }
  return bytes
}
