/** One quota: `limit` requests per `windowMs` (ms), sliding window counter. */
export interface Quota {
  limit: number
  windowMs: number
}

/** Which quota a request falls under (see README.md in this folder). */
export type QuotaClass = 'auth' | 'write' | 'user' | 'anonymous'

/** The quotas of the service. */
export interface Quotas {
  /** Authenticated requests (reads), per user. */
  user: Quota
  /** Anonymous requests (reads), per client IP (IPv6 per /64). */
  anonymous: Quota
  /** Writes (POST, PUT, PATCH, DELETE), per user when authenticated, else per IP. */
  write: Quota
  /** `POST /auth/login` and `POST /auth/register`, per IP whoever asks (brute force). */
  auth: Quota
  /** Per-route overrides, keyed `"<METHOD> <route pattern>"`, e.g. `"POST /videos"`, per user or IP. */
  routes: Readonly<Record<string, Quota>>
}

/**
 * Route patterns no quota applies to (GET and HEAD): the probes and the Prometheus scrape. A load balancer or Prometheus
 * polling from one address must not use up that address's anonymous quota, nor be refused a probe.
 */
export const UNLIMITED_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics'])

const AUTH_ROUTES = new Set(['POST /auth/login', 'POST /auth/register'])
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The class of a request from its method, matched route pattern and whether it is authenticated. */
export function classify(method: string, route: string | undefined, authenticated: boolean): QuotaClass {
  if (route !== undefined && AUTH_ROUTES.has(`${method} ${route}`)) return 'auth'
  if (!READ_METHODS.has(method)) return 'write'
  return authenticated ? 'user' : 'anonymous'
}

/**
 * Parses `RATE_LIMIT_ROUTES`: comma-separated `<METHOD> <route>=<limit>/<windowMs>` entries,
 * e.g. `POST /videos=20/60000, GET /feed/recommend=600/60000`.
 * @throws {Error} with a message naming the bad entry.
 */
export function parseRouteQuotas(text: string): Record<string, Quota> {
  const routes: Record<string, Quota> = {}
  for (const entry of text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)) {
    const match = /^([A-Z]+) (\/\S*)=(\d+)\/(\d+)$/.exec(entry)
    const limit = Number(match?.[3])
    const windowMs = Number(match?.[4])
    if (
      !match ||
      limit < 1 ||
      windowMs < 1 ||
      !Number.isSafeInteger(limit) ||
      !Number.isSafeInteger(windowMs)
    ) {
      throw new Error(`bad entry ${JSON.stringify(entry)}: expected "<METHOD> /route=<limit>/<windowMs>"`)
    }
    routes[`${match[1]} ${match[2]}`] = { limit, windowMs }
  }
  return routes
}
