export { type BreakerState, CircuitBreaker, type CircuitBreakerOptions } from './circuit_breaker.js'
