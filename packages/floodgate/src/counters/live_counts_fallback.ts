import { Singleflight } from '../cache/singleflight.js'
import type { CountsFallback, FallbackCounts } from './live_counts_options.js'
import type { LiveCountsStats } from './live_counts_types.js'

type Found = Map<string, FallbackCounts> | undefined

/**
 * The calls {@link LiveCounts} makes to its fallback while Redis cannot answer: anonymous reads
 * share one call per id at a time (an id in flight is joined, not asked again); reads with a
 * viewer share one call per (viewer, ids). A failing fallback answers `undefined`, never throws.
 */
export class FallbackCalls {
  private readonly inFlight = new Map<string, Promise<Found>>()
  private readonly viewerCalls = new Singleflight<Found>()

  constructor(
    private readonly fallback: CountsFallback,
    private readonly stats: LiveCountsStats,
  ) {}

  /** True while an anonymous call covers `id`. */
  loading(id: string): boolean {
    return this.inFlight.has(id)
  }

  /** Counts and `viewer`'s flags of `ids`, one call per (viewer, ids) at a time. */
  forViewer(ids: readonly string[], viewer: string): Promise<Found> {
    return this.viewerCalls.run(`${viewer}|${ids.join(',')}`, () => this.call(ids, viewer))
  }

  /**
   * One call for the ids nobody is loading (`keep` gets each answer before anyone resumes);
   * joins the calls in flight for the others.
   * @returns the ids some call answered.
   */
  async shared(
    ids: readonly string[],
    keep: (id: string, counts: FallbackCounts) => void,
  ): Promise<Set<string>> {
    const idle = ids.filter((id) => !this.inFlight.has(id))
    if (idle.length > 0) {
      const call = this.call(idle, undefined).then((found) => {
        for (const [id, c] of found ?? []) keep(id, c)
        return found
      })
      for (const id of idle) this.inFlight.set(id, call)
      void call.finally(() => {
        for (const id of idle) if (this.inFlight.get(id) === call) this.inFlight.delete(id)
      })
    }
    const calls = new Set(ids.map((id) => this.inFlight.get(id)!))
    const found = new Set<string>()
    for (const answer of await Promise.all(calls)) for (const id of answer?.keys() ?? []) found.add(id)
    return found
  }

  private async call(ids: readonly string[], viewer: string | undefined): Promise<Found> {
    this.stats.fallbackLoads++
    this.stats.fallbackIds += ids.length
    return this.fallback(ids, viewer).catch(() => undefined)
  }
}
