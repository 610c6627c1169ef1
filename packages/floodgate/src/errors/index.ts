export {
  FloodgateError,
  InvalidArgumentError,
  ScriptContractError,
  StoreUnavailableError,
} from './floodgate_error.js'
