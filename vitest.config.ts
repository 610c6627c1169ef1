import { defineConfig } from 'vitest/config'

/**
 * One runner for the whole repository. Each workspace is a Vitest project;
 * integration suites talk to the real Redis and PostgreSQL (see README,
 * "Tests"), so files run in forks and each isolates itself by key prefix and
 * schema.
 */
export default defineConfig({
  resolve: { conditions: ['floodgate-source'] },
  ssr: { resolve: { conditions: ['floodgate-source'], externalConditions: ['floodgate-source'] } },
  test: {
    projects: ['packages/floodgate', 'apps/video-api'],
  },
})
