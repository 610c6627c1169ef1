export { fullJitterDelayMs } from './full_jitter.js'
