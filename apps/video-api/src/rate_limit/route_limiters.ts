import { classify, type QuotaClass } from './quotas.js'

/** The limiters of one method and route pattern, and how its requests are keyed. */
export interface RouteLimiters<L> {
  /** For a request with a user id. */
  readonly authenticated: L
  /** For a request without one. */
  readonly anonymous: L
  /** Keyed by client address whoever asks (the `auth` class), else by user id when there is one. */
  readonly byAddress: boolean
}

/**
 * Picks the limiters of a request from its method and matched route pattern (`undefined`: no
 * route matched): the per-route limiter of `"<METHOD> <route>"` if any, else the class's
 * ({@link classify}). The answer is built once per method and route, not per request: both come
 * from finite sets (the registered patterns, the methods the router accepts).
 */
export function routeLimiters<L>(
  byClass: Readonly<Record<QuotaClass, L>>,
  byRoute: ReadonlyMap<string, L>,
): (method: string, route: string | undefined) => RouteLimiters<L> {
  const byMethod = new Map<string, Map<string | undefined, RouteLimiters<L>>>()
  return (method, route) => {
    let routes = byMethod.get(method)
    if (routes === undefined) {
      routes = new Map()
      byMethod.set(method, routes)
    }
    let chosen = routes.get(route)
    if (chosen === undefined) {
      const override = byRoute.get(`${method} ${route}`)
      const pick = (authenticated: boolean) => override ?? byClass[classify(method, route, authenticated)]
      chosen = {
        authenticated: pick(true),
        anonymous: pick(false),
        byAddress: classify(method, route, false) === 'auth',
      }
      routes.set(route, chosen)
    }
    return chosen
  }
}
