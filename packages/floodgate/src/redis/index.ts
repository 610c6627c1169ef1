export { crc16, hashTagOf, keySlot, SLOT_COUNT } from './cluster_slot.js'
export {
  type CreateRedisClientOptions,
  createRedisClient,
  type FloodgateClientOptions,
  floodgateRedisOptions,
} from './create_client.js'
export { type DedicatedConnectionOptions, openDedicatedConnection } from './dedicated_connection.js'
export { KeySpace } from './key_space.js'
export { type EmbeddedLua, LuaScript } from './lua_script.js'
export { awaitFirstConnection } from './startup_gate.js'
export { isCluster, type RedisClient } from './types.js'
