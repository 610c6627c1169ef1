import { databaseFields, seedFields } from './fields/database.js'
import { interactionFields } from './fields/interactions.js'
import { rateLimitFields } from './fields/rate_limit.js'
import { readCacheFields } from './fields/read_cache.js'
import { redisFields } from './fields/redis.js'
import { httpFields, listenFields } from './fields/server.js'
import type { FieldSpec } from './fields/spec.js'

export type { FieldKind, FieldSpec } from './fields/spec.js'

/**
 * Every configuration option of video-api: its environment variable, its
 * key in the optional TOML file, its default and its unit. Units are in the
 * names (`_MS`, `_S`, `_BYTES`). Where floodgate has the option, the default
 * is floodgate's constant; the app's settings take their defaults from here.
 * The groups live in ./fields/, one per capability; their order here is the
 * order of the README's configuration table.
 */
export const fields = {
  ...listenFields,
  ...databaseFields,
  ...redisFields,
  ...readCacheFields,
  ...httpFields,
  ...seedFields,
  ...rateLimitFields,
  ...interactionFields,
} as const satisfies Record<string, FieldSpec>

export type FieldName = keyof typeof fields
