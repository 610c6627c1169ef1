import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['floodgate-source'] },
  test: {
    name: 'video-api',
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
