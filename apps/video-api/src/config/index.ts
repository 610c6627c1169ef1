export { ConfigError } from './config_error.js'
export { fields } from './fields.js'
export { adminIds, type LoadOptions, loadConfig, redisClusterSeeds, repoRoot } from './load.js'
export type { Config } from './types.js'
