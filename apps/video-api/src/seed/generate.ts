import type { Prng } from './prng.js'
import { description, title } from './text.js'
import { Zipf } from './zipf.js'

export interface SeedPlan {
  users: number
  videos: number
  /** PRNG seed. @default 42 */
  seed: number
  /** Newest creation time (ms epoch); videos spread over the 180 days before it. */
  anchorMs: number
}

export interface GeneratedVideo {
  /** Index (0-based) of the author among the generated users. */
  authorIndex: number
  title: string
  description: string
  coverUrl: string
  playUrl: string
  visibility: 'public' | 'private'
  status: 'draft' | 'published'
  createdAt: Date
  /** Zipf popularity rank (1 = hottest), a permutation of 1..videos. */
  rank: number
}

const SPREAD_MS = 180 * 24 * 3600 * 1000

/**
 * Deterministic catalog: author activity is Zipf(s=1) over users (a few
 * prolific authors, a long tail), creation times uniform over six months,
 * 90 % published and 95 % public, and a popularity rank per video drawn as a
 * random permutation, so rank k (P ∝ 1/k, s = 1) is what benchmarks sample.
 */
export function* generateVideos(plan: SeedPlan, prng: Prng): Generator<GeneratedVideo> {
  const authors = new Zipf(plan.users, 1)
  const authorOrder = prng.shuffle(Array.from({ length: plan.users }, (_, i) => i))
  const ranks = prng.shuffle(Array.from({ length: plan.videos }, (_, i) => i + 1))
  for (let i = 0; i < plan.videos; i++) {
    const key = `${plan.seed}-${i}`
    yield {
      authorIndex: authorOrder[authors.sample(prng) - 1]!,
      title: title(prng),
      description: description(prng),
      coverUrl: `https://cdn.example.com/covers/${key}.jpg`,
      playUrl: `https://cdn.example.com/videos/${key}.mp4`,
      visibility: prng.next() < 0.95 ? 'public' : 'private',
      status: prng.next() < 0.9 ? 'published' : 'draft',
      createdAt: new Date(plan.anchorMs - Math.floor(prng.next() * SPREAD_MS)),
      rank: ranks[i]!,
    }
  }
}

/** `u<seed>_<n>`: unique per seed, so catalogs with different seeds coexist. */
export function username(seed: number, index: number): string {
  return `u${seed}_${String(index + 1).padStart(6, '0')}`
}
