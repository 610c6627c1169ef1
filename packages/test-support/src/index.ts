export { dropSchema, TEST_DATABASE_URL } from './pg_schema.js'
export { freePort } from './ports.js'
export { deleteByPrefix, forEachKeyPage, type KeyScanner, uniquePrefix } from './redis_keys.js'
export { parseSeeds, TEST_REDIS_CLUSTER_NODES, TEST_REDIS_URL } from './targets.js'
