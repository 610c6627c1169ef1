export * from './errors/index.js'
export * from './redis/index.js'
export * from './lock/index.js'
export * from './ratelimit/index.js'
