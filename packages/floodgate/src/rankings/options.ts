import { InvalidArgumentError } from '../errors/index.js'
import { InteractionKeys } from '../interactions/keys.js'
import { interactionLayout } from '../interactions/layout.js'
import { integerIn } from '../validation/index.js'
import {
  DEFAULT_WINDOWS,
  RANKING_METRICS,
  type RankingMetric,
  type TopQuery,
  type WindowSpec,
} from './types.js'

/**
 * Shortest half-life a window accepts (ms): event times are whole ms, and far below it
 * the half-life in minutes rounds to 0 (bucket weights) and λ·t overflows (decayed design).
 */
export const MIN_HALF_LIFE_MS = 1

/** A window after validation: whole minutes and a half-life in minutes. */
export interface ResolvedWindow {
  name: string
  windowMs: number
  windowMinutes: number
  halfLifeMs: number
  /** Fresh period of the merged result (ms); undefined = the rankings' default. */
  cacheTtlMs: number | undefined
}

/**
 * Validates the window table: names other than `all`, lengths that are whole
 * minutes between 1 min and 24 h, finite half-lives of at least {@link MIN_HALF_LIFE_MS}.
 * @throws {InvalidArgumentError} naming the offending window.
 */
export function resolveWindows(windows: Readonly<Record<string, WindowSpec>> = DEFAULT_WINDOWS) {
  const resolved = new Map<string, ResolvedWindow>()
  for (const [name, spec] of Object.entries(windows)) {
    const field = `windows.${name}`
    if (name === 'all' || !/^[\w-]{1,32}$/.test(name))
      throw new InvalidArgumentError(field, 'a window name is 1–32 word characters and not "all"')
    if (!Number.isInteger(spec.windowMs) || spec.windowMs % 60_000 !== 0 || spec.windowMs < 60_000)
      throw new InvalidArgumentError(
        `${field}.windowMs`,
        'must be a whole number of minutes (ms), at least 60000',
      )
    if (spec.windowMs > 86_400_000)
      throw new InvalidArgumentError(`${field}.windowMs`, 'buckets live 24 h + margin: at most 86400000')
    const halfLifeMs = spec.halfLifeMs ?? spec.windowMs / 4
    if (!Number.isFinite(halfLifeMs) || halfLifeMs < MIN_HALF_LIFE_MS)
      throw new InvalidArgumentError(
        `${field}.halfLifeMs`,
        `must be a finite number ≥ ${MIN_HALF_LIFE_MS} (ms), got ${halfLifeMs}`,
      )
    if (spec.cacheTtlMs !== undefined) integerIn(`${field}.cacheTtlMs`, spec.cacheTtlMs, 1, 3_600_000)
    resolved.set(name, {
      name,
      windowMs: spec.windowMs,
      windowMinutes: spec.windowMs / 60_000,
      halfLifeMs,
      cacheTtlMs: spec.cacheTtlMs,
    })
  }
  return resolved
}

/** Checks metric, and limit against topK; the window is checked by the caller. */
export function assertQuery(query: TopQuery, topK: number): RankingMetric {
  if (!RANKING_METRICS.includes(query.metric))
    throw new InvalidArgumentError('metric', `must be one of ${RANKING_METRICS.join(', ')}`)
  integerIn('limit', query.limit, 1, topK)
  return query.metric
}

/** What both ranking designs share: the keys, the entries kept per partition, the validated windows. */
export interface RankingsLayout {
  keys: InteractionKeys
  topK: number
  windows: Map<string, ResolvedWindow>
}

/**
 * Validates the options both designs take (prefix, partitions and topK as `interactionLayout`;
 * `windows` default {@link DEFAULT_WINDOWS}) and builds their keys.
 * @throws {InvalidArgumentError} naming the offending option.
 */
export function resolveRankingsLayout(options: {
  prefix: string
  partitions?: number
  topK?: number
  windows?: Readonly<Record<string, WindowSpec>>
}): RankingsLayout {
  const { prefix, partitions, topK } = interactionLayout(options)
  return {
    keys: new InteractionKeys(prefix, partitions),
    topK,
    windows: resolveWindows(options.windows),
  }
}

/**
 * The trending window called `name`.
 * @throws {InvalidArgumentError} (`window`) listing the valid names when there is none.
 */
export function windowOf(windows: ReadonlyMap<string, ResolvedWindow>, name: string): ResolvedWindow {
  const window = windows.get(name)
  if (!window)
    throw new InvalidArgumentError('window', `must be one of ${['all', ...windows.keys()].join(', ')}`)
  return window
}
