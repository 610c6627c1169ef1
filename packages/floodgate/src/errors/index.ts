export { FLOODGATE_ERROR_CODES, type FloodgateErrorCode } from './codes.js'
export {
  FloodgateError,
  InvalidArgumentError,
  LuaIncludeError,
  ScriptContractError,
  StoreUnavailableError,
} from './floodgate_error.js'
