import { isIP } from 'node:net'
import { ConfigError } from '../config/config_error.js'
import type { Config } from '../config/types.js'
import { parseRouteQuotas } from './quotas.js'
import { PER_INSTANCE_INSURANCE, type RateLimitSettings } from './settings.js'

/**
 * The plugin settings from the validated config (`RATE_LIMIT_*`), or `undefined` when disabled.
 */
export function rateLimitFromConfig(config: Config): RateLimitSettings | undefined {
  if (!config.rateLimitEnabled) return undefined
  const routes = parseRouteQuotas(config.rateLimitRoutes) // checked by loadConfig
  const fallback: RateLimitSettings['fallback'] =
    config.rateLimitFallback !== 'insurance'
      ? config.rateLimitFallback
      : config.rateLimitInsurancePercent === 0
        ? PER_INSTANCE_INSURANCE
        : { insurance: { share: config.rateLimitInsurancePercent / 100 } }
  return {
    prefix: config.redisPrefix,
    mode: config.rateLimitMode,
    timeoutMs: config.rateLimitTimeoutMs,
    maxWaitMs: Math.max(config.redisMaxWaitMs, config.rateLimitTimeoutMs),
    fallback,
    quotas: {
      user: { limit: config.rateLimitUserLimit, windowMs: config.rateLimitUserWindowMs },
      anonymous: { limit: config.rateLimitAnonymousLimit, windowMs: config.rateLimitAnonymousWindowMs },
      write: { limit: config.rateLimitWriteLimit, windowMs: config.rateLimitWriteWindowMs },
      auth: { limit: config.rateLimitAuthLimit, windowMs: config.rateLimitAuthWindowMs },
      routes,
    },
  }
}

/**
 * Fastify's `trustProxy` from `TRUST_PROXY`: `false` (default: X-Forwarded-For ignored), `true`
 * (trust every hop: only behind a proxy that overwrites the header), a hop count, or
 * comma-separated addresses/CIDRs of the proxies to trust.
 * @throws {ConfigError} naming `TRUST_PROXY` for an entry that is neither an address nor a CIDR.
 */
export function parseTrustProxy(
  text: string,
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (text === 'false') return false
  if (text === 'true') return true
  if (/^\d+$/.test(text)) {
    const hops = Number(text)
    return (_address, hop) => hop < hops // trust the nearest `hops` proxies
  }
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/')
    const family = isIP(address ?? '')
    const maxBits = family === 6 ? 128 : 32
    const okBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits)
    if (family === 0 || !okBits || extra !== undefined) {
      throw new ConfigError(
        'TRUST_PROXY',
        `must be false, true, a hop count or IPs/CIDRs, got ${JSON.stringify(entry)}`,
      )
    }
  }
  return entries
}

/**
 * Checks the rate-limit fields that need more than a type check (called by `loadConfig`).
 * @throws {ConfigError} naming `RATE_LIMIT_ROUTES` or `TRUST_PROXY`.
 */
export function checkRateLimitConfig(config: Config): void {
  parseTrustProxy(config.trustProxy)
  try {
    parseRouteQuotas(config.rateLimitRoutes)
  } catch (error) {
    throw new ConfigError('RATE_LIMIT_ROUTES', (error as Error).message)
  }
}
