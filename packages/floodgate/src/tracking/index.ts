export {
  ClientTracking,
  type ClientTrackingStats,
  INVALIDATION_CHANNEL,
  type InvalidationListener,
  type TrackingState,
} from './client_tracking.js'
export type { TrackedRead } from './in_flight.js'
export { CLIENT_TRACKING_DEFAULTS, type ClientTrackingOptions } from './options.js'
