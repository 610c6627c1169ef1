/**
 * The environment variable `name` as a positive integer in `unit` (e.g. `ms`, `µs`), or
 * `undefined` when it is not set. One check for every knob the bench and its instances read.
 * @throws {Error} naming the variable and its unit for any other text (`2ms`, `1e3`, `0`).
 */
export function positiveIntegerEnv(name: string, unit: string): number | undefined {
  const text = process.env[name]
  if (text === undefined) return undefined
  const n = Number(text)
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(n))
    throw new Error(`${name} must be a positive integer (${unit}), got ${text}`)
  return n
}
