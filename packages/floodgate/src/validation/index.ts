export {
  finiteNumber,
  integerAtLeast,
  integerIn,
  nonEmptyString,
  nonNegativeInteger,
  positiveInteger,
  positiveNumber,
  share,
} from './checks.js'
