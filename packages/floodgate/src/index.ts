export * from './errors/index.js'
export * from './redis/index.js'
