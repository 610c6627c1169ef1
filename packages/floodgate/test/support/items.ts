/** `<label>:<from>` … `<label>:<to − 1>`: ids for filter and cache tests. */
export function range(from: number, to: number, label: string): string[] {
  return Array.from({ length: to - from }, (_, i) => `${label}:${from + i}`)
}

/** `items` in chunks of `size`, as a rebuild source. */
export async function* chunks(items: readonly string[], size: number): AsyncIterable<string[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size)
}
