/** A seeded LCG (Numerical Recipes' constants) in [0, 1), so a failing random sequence can be replayed. */
export function prng(seed: number): () => number {
  let x = seed >>> 0
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0
    return x / 4294967296
  }
}
