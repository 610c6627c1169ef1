import { withinDeadline } from '../deadline/index.js'
import { userKeyOf } from './namespace/scoped_key.js'
import type { BloomGate, ResolvedCallOptions } from './options.js'
import type { CacheStack } from './stack.js'

/**
 * Where a read asks its Bloom gate, the same for `getOrLoad` and `getManyOrLoad`:
 * - `before_l2`: an in-process gate (`inProcess: true`) answers from memory, so an absent id
 *   costs no L2 read and writes no negative key;
 * - `after_l2`: a remote gate lives on Redis too and guards the loader only, so it is asked for
 *   the keys L2 had nothing to serve: an L2 hit (value or negative entry) costs no Bloom round trip;
 * - `none`: no gate for this call.
 */
export type GatePosition = 'before_l2' | 'after_l2' | 'none'

/** The position of the call's gate (see {@link GatePosition}). */
export function gatePosition(o: ResolvedCallOptions): GatePosition {
  if (o.bloom === false) return 'none'
  return o.bloom.inProcess === true ? 'before_l2' : 'after_l2'
}

/** Whether the call's gate stands at `position` (callers skip {@link passGate}'s await when not). */
export function gateAt(o: ResolvedCallOptions, position: Exclude<GatePosition, 'none'>): boolean {
  return gatePosition(o) === position
}

/**
 * Asks the Bloom gate about the caller's keys of `ids` (one batched question) in a
 * `floodgate.cache.bloom` span; any failure answers "maybe" (fail open). While the L2 breaker is
 * not closed a remote gate is not asked at all ("maybe" for every key): it lives on Redis too, and
 * a black-holed Redis would otherwise cost every miss the gate's command timeout while L2 reads are
 * skipped. An in-process gate is always asked (its Redis waits have their own deadline).
 * @returns per id, `false` when the gate says "definitely absent".
 */
export async function bloomAllows<T>(
  stack: CacheStack<T>,
  bloom: BloomGate,
  ids: readonly string[],
): Promise<boolean[]> {
  if (bloom.inProcess !== true && stack.breaker.state !== 'closed') return ids.map(() => true)
  try {
    return await stack.step('bloom', () => {
      // an in-process gate bounds its own Redis waits (sync, fallback query) and never throws
      const answers = bloom.mightContain(ids.map(userKeyOf))
      return bloom.inProcess === true ? answers : withinDeadline(answers, stack.o.redisDeadline, 'bloom gate')
    })
  } catch {
    return ids.map(() => true)
  }
}

/**
 * The ids of `ids` that pass the call's gate if it stands at `position` (all of them otherwise);
 * each rejected id is counted as `bloom_reject` and handed to `onReject`.
 */
export async function passGate<T>(
  stack: CacheStack<T>,
  o: ResolvedCallOptions,
  ids: readonly string[],
  position: Exclude<GatePosition, 'none'>,
  onReject?: (id: string) => void,
): Promise<readonly string[]> {
  if (o.bloom === false || ids.length === 0 || gatePosition(o) !== position) return ids
  const maybe = await bloomAllows(stack, o.bloom, ids)
  return ids.filter((id, i) => {
    if (maybe[i] !== false) return true
    stack.count('bloom_reject', id)
    onReject?.(id)
    return false
  })
}
