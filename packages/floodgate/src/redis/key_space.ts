import { InvalidArgumentError } from '../errors/index.js'

/**
 * Builds Redis keys under one prefix. Keys that a multi-key script or an
 * atomic pipeline touches together share a hash tag (`{...}`), so Redis
 * Cluster puts them in one slot; the tag is always the narrowest unit of
 * atomicity (one cache key, one limiter key, one counted item), never one tag for
 * everything, so load still spreads over the cluster.
 *
 * Layout: `<prefix>:<area>:{<tag>}[:<suffix>]`.
 */
export class KeySpace {
  readonly prefix: string

  /** @throws {InvalidArgumentError} when `prefix` is empty or contains `{` or `}`. */
  constructor(prefix: string) {
    if (prefix.length === 0) throw new InvalidArgumentError('prefix', 'must not be empty')
    if (/[{}]/.test(prefix))
      throw new InvalidArgumentError('prefix', 'must not contain { or } (hash-tag braces)')
    this.prefix = prefix
  }

  /** `<prefix>:<area>:{<tag>}` plus `:<suffix>` when given. Braces in `tag` are escaped so they cannot break the slot. */
  tagged(area: string, tag: string, suffix?: string): string {
    const base = `${this.prefix}:${area}:{${escapeTag(tag)}}`
    return suffix === undefined ? base : `${base}:${suffix}`
  }

  /** An untagged key: `<prefix>:<area>:<name>` (single-key commands only). */
  plain(area: string, name: string): string {
    return `${this.prefix}:${area}:${name}`
  }

  /** A pub/sub channel name: `<prefix>:<name>`. */
  channel(name: string): string {
    return `${this.prefix}:${name}`
  }
}

function escapeTag(tag: string): string {
  // on every cache read: most tags hold no brace, and a test is cheaper than a replace
  if (!tag.includes('{') && !tag.includes('}')) return tag
  return tag.replace(/[{}]/g, (c) => (c === '{' ? '%7B' : '%7D'))
}
