import { ConfigError } from '../config/config_error.js'

/**
 * A command-line option's integer value, `fallback` when the option is absent. One wording for
 * every CLI: `--<name>: must be an integer ≥ <min>, got "<text>"`, then the command's `usage`.
 * @throws {ConfigError} naming `--<name>` unless `text` is a decimal safe integer ≥ `min`.
 */
export function integerArgument(
  name: string,
  text: string | undefined,
  fallback: number,
  min: number,
  usage: string,
): number {
  if (text === undefined) return fallback
  if (!/^\d+$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text))) {
    throw new ConfigError(`--${name}`, `must be an integer ≥ ${min}, got ${JSON.stringify(text)}\n${usage}`)
  }
  return Number(text)
}
