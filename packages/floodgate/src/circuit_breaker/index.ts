export { type BreakerState, CircuitBreaker, type CircuitBreakerOptions } from './circuit_breaker.js'
export { BREAKER_DEFAULTS } from './defaults.js'
