import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['floodgate-source'] },
  test: {
    name: 'floodgate',
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
