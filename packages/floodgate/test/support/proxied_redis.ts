import type { Redis } from 'ioredis'
import { PrivateRedis, privateRedisClient } from './redis_server.js'
import { StallingProxy } from './stalling_proxy.js'

/** A private redis-server, an admin client on it, and a {@link StallingProxy} in front of it. */
export interface ProxiedRedis {
  server: PrivateRedis
  admin: Redis
  proxy: StallingProxy
  /** Closes the proxy, the admin client and the server. */
  close(): Promise<void>
}

/** Starts a {@link ProxiedRedis}: for tests that hold or stall some connections' replies. */
export async function startProxiedRedis(): Promise<ProxiedRedis> {
  const server = await PrivateRedis.start()
  const admin = await privateRedisClient(server)
  const proxy = await StallingProxy.start(server.port)
  return {
    server,
    admin,
    proxy,
    async close() {
      admin.disconnect()
      await proxy.close()
      await server.destroy()
    },
  }
}
