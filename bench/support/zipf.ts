/**
 * Zipf(s) sampler over ranks 0..n-1 (rank r drawn with probability ∝ 1/(r+1)^s),
 * by inverse transform on the precomputed CDF (binary search). `random` gives
 * uniform numbers in [0, 1): `Math.random`, or {@link seededRandom} so runs
 * draw the same mix.
 */
export function zipfSampler(n: number, s = 1, random: () => number = Math.random): () => number {
  const cdf = new Float64Array(n)
  let total = 0
  for (let r = 0; r < n; r++) {
    total += 1 / (r + 1) ** s
    cdf[r] = total
  }
  return () => {
    const u = random() * total
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

/**
 * Uniform numbers in [0, 1) from a 32-bit linear congruential generator
 * (Numerical Recipes constants 1664525, 1013904223): the same `seed` gives the same sequence.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 4294967296
  }
}
