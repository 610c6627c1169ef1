/**
 * Every `code` a video-api process error carries: one catalogue, one prefix (the library's
 * errors carry `FLOODGATE_*`; the HTTP API's problem codes are in `http/api_error.ts`).
 */
export const VIDEO_API_ERROR_CODES = {
  /** `ConfigError`: a configuration value is invalid (the message starts with the field name). */
  CONFIG_INVALID: 'VIDEO_API_CONFIG_INVALID',
  /** `DataDirLockedError`: another process has the embedded database's folder open. */
  DATA_DIR_LOCKED: 'VIDEO_API_DATA_DIR_LOCKED',
  /** `RedisPrefixOwnedError`: REDIS_PREFIX holds another database's installation's keys. */
  REDIS_PREFIX_OWNED: 'VIDEO_API_REDIS_PREFIX_OWNED',
  /** `RedisServerMissingError`: no `redis-server` to start for the embedded Redis. */
  REDIS_SERVER_MISSING: 'VIDEO_API_REDIS_SERVER_MISSING',
  /** `VideoIdsReadError`: reading the video ids from PostgreSQL failed during a Bloom rebuild. */
  VIDEO_IDS_READ_FAILED: 'VIDEO_API_VIDEO_IDS_READ_FAILED',
} as const

/** One of {@link VIDEO_API_ERROR_CODES}. */
export type VideoApiErrorCode = (typeof VIDEO_API_ERROR_CODES)[keyof typeof VIDEO_API_ERROR_CODES]

/** Base class of the service's own errors; `code` is stable (match on it, not on the message). */
export class VideoApiError extends Error {
  readonly code: VideoApiErrorCode

  constructor(code: VideoApiErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}
