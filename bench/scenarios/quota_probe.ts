import { benchIp } from './context.js'

/** One policy of a `RateLimit-Policy` field: its name, quota and window (ms). */
export interface PolicyQuota {
  name: string
  limit: number
  windowMs: number
}

/**
 * The first policy of a `RateLimit-Policy` field (IETF draft-ietf-httpapi-ratelimit-headers, as
 * floodgate's `rateLimitHeaders` writes it): `"<name>";q=<limit>;w=<window in s>`.
 * @throws {Error} when the field has no quoted name or no integer `q` and `w`.
 */
export function parseRateLimitPolicy(field: string): PolicyQuota {
  const [first = ''] = field.split(',')
  const [name, ...params] = first.split(';').map((s) => s.trim())
  const quoted = /^"([^"]*)"$/.exec(name ?? '')
  const value = (key: string) => {
    const text = params.find((p) => p.startsWith(`${key}=`))?.slice(key.length + 1)
    return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined
  }
  const limit = value('q')
  const windowS = value('w')
  if (!quoted || limit === undefined || windowS === undefined)
    throw new Error(`not a RateLimit-Policy item with q and w: ${JSON.stringify(field)}`)
  return { name: quoted[1]!, limit, windowMs: windowS * 1000 }
}

/**
 * The quota the instance at `base` applies to the caller `headers` name (a bearer token: the
 * per-user quota), read from the `RateLimit-Policy` field of one `GET path`: the running
 * service's configuration, not a copy of its defaults. The probe itself counts against that caller.
 * @throws {Error} when the answer has no such field (rate limiting off).
 */
export async function probeQuota(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<PolicyQuota> {
  const res = await fetch(`${base}${path}`, { headers: { 'x-forwarded-for': benchIp(), ...headers } })
  await res.arrayBuffer()
  const field = res.headers.get('ratelimit-policy')
  if (field === null) throw new Error(`GET ${path} answered ${res.status} without RateLimit-Policy`)
  return parseRateLimitPolicy(field)
}
