export type { FloodgateLogger } from './logger.js'
