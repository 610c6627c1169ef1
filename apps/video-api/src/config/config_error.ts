import { VideoApiError } from '../errors/index.js'

/** A configuration value is invalid. `code`: `VIDEO_API_CONFIG_INVALID`; the message starts with the field name. */
export class ConfigError extends VideoApiError {
  readonly field: string

  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super('VIDEO_API_CONFIG_INVALID', `${field}: ${message}`, options)
    this.field = field
  }
}
