/**
 * How a Redis Cluster with an even slot split places load on its masters, for the spread test
 * and bench (issue 26).
 *
 * Source of the split: redis-cli's `--cluster create` (redis-cli.c, clusterManagerCommandCreate):
 * `slotsPerNode = 16384 / M` (a float); master `i` takes `first … lround(cursor + slotsPerNode − 1)`
 * where `cursor = i · slotsPerNode`, the last master takes everything up to 16383.
 */
const SLOTS = 16384

/** `masters[slot]` = the master (0 … M−1) serving `slot` with an even split over `masters` masters. */
export function evenSlotSplit(masters: number): Uint16Array {
  const owner = new Uint16Array(SLOTS)
  const perNode = SLOTS / masters
  let first = 0
  let cursor = 0
  for (let i = 0; i < masters; i++) {
    let last = Math.round(cursor + perNode - 1)
    if (last > SLOTS || i === masters - 1) last = SLOTS - 1
    if (last < first) last = first
    owner.fill(i, first, last + 1)
    first = last + 1
    cursor += perNode
  }
  return owner
}

/** The load per master and how even it is. */
export interface MasterSpread {
  masters: number
  /** Load of each master (whatever unit `slotLoads` counts, e.g. commands). */
  loads: number[]
  /** Busiest master's load / mean load (1 = perfectly even). */
  maxOverMean: number
  /** Masters with no load at all. */
  idle: number
}

/** Places each slot's load (`slotLoads`: slot → load) on `masters` masters split evenly. */
export function spreadOver(masters: number, slotLoads: ReadonlyMap<number, number>): MasterSpread {
  const owner = evenSlotSplit(masters)
  const loads = new Array<number>(masters).fill(0)
  for (const [slot, load] of slotLoads) {
    const master = owner[slot] ?? 0
    loads[master] = (loads[master] ?? 0) + load
  }
  const total = loads.reduce((a, b) => a + b, 0)
  const mean = total / masters
  return {
    masters,
    loads,
    maxOverMean: mean === 0 ? 0 : Math.max(...loads) / mean,
    idle: loads.filter((l) => l === 0).length,
  }
}
