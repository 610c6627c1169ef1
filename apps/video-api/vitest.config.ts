import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['floodgate-source'] },
  // Tests run in Node (SSR environment): the `floodgate` package must resolve to its TypeScript source there too.
  ssr: { resolve: { conditions: ['floodgate-source'], externalConditions: ['floodgate-source'] } },
  test: {
    name: 'video-api',
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
