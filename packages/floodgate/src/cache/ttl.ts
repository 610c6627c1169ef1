/** A uniform draw in [minMs, maxMs] (ms), integer. Spreads L2 expiry so keys filled together do not expire together (avalanche). */
export function drawTtlMs(range: { minMs: number; maxMs: number }): number {
  return range.minMs + Math.floor(Math.random() * (range.maxMs - range.minMs + 1))
}

/** `baseMs` ± a uniform jitter of up to `jitterMs` (ms, capped at `baseMs / 2`): one waiter's deadline. */
export function jitteredMs(baseMs: number, jitterMs: number): number {
  const spread = Math.min(jitterMs, baseMs / 2)
  return Math.max(1, Math.round(baseMs + (Math.random() * 2 - 1) * spread))
}
