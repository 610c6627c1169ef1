export {
  integerAtLeast,
  integerIn,
  nonEmptyString,
  nonNegativeInteger,
  positiveInteger,
  share,
} from './checks.js'
