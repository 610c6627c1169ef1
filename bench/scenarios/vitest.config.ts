import { defineConfig } from 'vitest/config'

/** The scenario bench's own tests (`npx vitest run -c bench/scenarios/vitest.config.ts`); real Redis at 127.0.0.1:6379. */
export default defineConfig({
  resolve: { conditions: ['floodgate-source'] },
  ssr: { resolve: { conditions: ['floodgate-source'], externalConditions: ['floodgate-source'] } },
  test: { include: ['bench/scenarios/test/**/*.test.ts'], pool: 'forks' },
})
