import { FloodgateError } from 'floodgate'

/** A configuration value is invalid. `code`: `CONFIG_INVALID`; the message starts with the field name. */
export class ConfigError extends FloodgateError {
  readonly field: string

  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super('CONFIG_INVALID', `${field}: ${message}`, options)
    this.field = field
  }
}
