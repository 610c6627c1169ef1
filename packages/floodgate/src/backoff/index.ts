export { equalJitterDelayMs } from './equal_jitter.js'
export { fullJitterDelayMs } from './full_jitter.js'
