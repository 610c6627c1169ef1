/**
 * Redis Cluster's key → slot mapping, for tests that check which keys a call touches: the
 * library's own (src/redis/cluster_slot.ts), pinned against the specification's check value in
 * test/redis/cluster_slot.test.ts.
 */
export { crc16, hashTagOf, keySlot, SLOT_COUNT } from '../../src/redis/cluster_slot.js'
