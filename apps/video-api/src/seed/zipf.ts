import type { Prng } from './prng.js'

/**
 * Zipf sampler over ranks 1..n with P(k) ∝ 1/k^s, by inverse transform on
 * the precomputed CDF (binary search). s ≈ 1 is the classic web/video
 * popularity skew (Breslau et al., "Web Caching and Zipf-like
 * Distributions", INFOCOM 1999).
 */
export class Zipf {
  private readonly cdf: Float64Array

  constructor(
    readonly n: number,
    readonly s = 1,
  ) {
    this.cdf = new Float64Array(n)
    let sum = 0
    for (let k = 1; k <= n; k++) {
      sum += 1 / k ** s
      this.cdf[k - 1] = sum
    }
    for (let i = 0; i < n; i++) this.cdf[i] = this.cdf[i]! / sum
  }

  /** A rank in 1..n (1 = most popular). */
  sample(prng: Prng): number {
    const u = prng.next()
    let lo = 0
    let hi = this.n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.cdf[mid]! < u) lo = mid + 1
      else hi = mid
    }
    return lo + 1
  }
}
