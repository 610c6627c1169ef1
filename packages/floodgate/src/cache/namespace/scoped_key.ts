/**
 * The cache's internal id of a key: the key itself at the root, `\0<namespace>\0<generation>\0<key>`
 * inside a namespace. One string keys L1, singleflight, wake-ups and bus messages alike; a root
 * key may not start with `\0`, so the two forms never collide.
 */
const SEP = '\u0000'

/** A namespace key's parts; `undefined` for a root key. */
export interface ScopedParts {
  namespace: string
  generation: number
  key: string
}

/** The id of `key` in generation `generation` of `namespace`. */
export function scopedId(namespace: string, generation: number, key: string): string {
  return `${SEP}${namespace}${SEP}${generation}${SEP}${key}`
}

/** The parts of a namespaced id, or `undefined` for a root id. */
export function scopedParts(id: string): ScopedParts | undefined {
  if (id.charCodeAt(0) !== 0) return undefined
  const a = id.indexOf(SEP, 1)
  const b = id.indexOf(SEP, a + 1)
  return { namespace: id.slice(1, a), generation: Number(id.slice(a + 1, b)), key: id.slice(b + 1) }
}

/** The caller's key of an id (what loaders, Bloom gates and events see). */
export function userKeyOf(id: string): string {
  return id.charCodeAt(0) === 0 ? id.slice(id.indexOf(SEP, id.indexOf(SEP, 1) + 1) + 1) : id
}

/** Whether `key` may be used at the root (it must not look like a namespaced id). */
export function isRootKey(key: string): boolean {
  return key.charCodeAt(0) !== 0
}
