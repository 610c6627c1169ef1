export { DEADLINE_DEFAULTS } from './defaults.js'
export { loopIdleMs } from './idle_clock.js'
export { countsAgainstRedis, RedisTimeoutError } from './redis_timeout_error.js'
export { checkDeadline, type Deadline, withinDeadline } from './within_deadline.js'
