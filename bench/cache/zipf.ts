/**
 * Zipf(s) sampler over ranks 0..n-1 (rank r drawn with probability ∝ 1/(r+1)^s),
 * by inverse transform on the precomputed CDF (binary search).
 */
export function zipfSampler(n: number, s = 1): () => number {
  const cdf = new Float64Array(n)
  let total = 0
  for (let r = 0; r < n; r++) {
    total += 1 / (r + 1) ** s
    cdf[r] = total
  }
  for (let r = 0; r < n; r++) cdf[r]! /= total
  return () => {
    const u = Math.random()
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cdf[mid]! < u) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/** Percentile (0–100) of an unsorted sample, nearest rank. */
export function percentile(sample: readonly number[], p: number): number {
  if (sample.length === 0) return Number.NaN
  const sorted = [...sample].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}
