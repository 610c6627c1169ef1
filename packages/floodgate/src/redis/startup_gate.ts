import type { RedisClient } from './types.js'

interface Gate {
  /** `Date.now()` when a primitive first used the client (ms epoch). */
  readonly openedAtMs: number
  /** The client has been ready at least once. */
  isReady: boolean
}

const gates = new WeakMap<RedisClient, Gate>()

function gateOf(redis: RedisClient): Gate {
  const known = gates.get(redis)
  if (known) return known
  const gate: Gate = { openedAtMs: Date.now(), isReady: redis.status === 'ready' }
  if (!gate.isReady)
    redis.once('ready', () => {
      gate.isReady = true
    })
  gates.set(redis, gate)
  return gate
}

/** Whether the client has been ready at least once: no wait is needed (checked without a promise, for hot paths). */
export function connectedOnce(redis: RedisClient): boolean {
  const gate = gateOf(redis)
  if (!gate.isReady && redis.status === 'ready') gate.isReady = true
  return gate.isReady
}

/**
 * Waits for the client's first connection, at most `boundMs` (ms) counted from the first time any
 * primitive used this client, so a burst of calls at start-up shares one bound. Resolves `true`
 * once the client has been ready at least once (at once afterwards, even during a later outage:
 * outages are the fallbacks' job), `false` when the bound passed first or the client was closed
 * (`end`: it will not connect by itself). Never rejects.
 */
export async function awaitFirstConnection(redis: RedisClient, boundMs: number): Promise<boolean> {
  const gate = gateOf(redis)
  if (gate.isReady || redis.status === 'ready') {
    gate.isReady = true
    return true
  }
  const leftMs = gate.openedAtMs + boundMs - Date.now()
  if (leftMs <= 0 || redis.status === 'end') return false
  return new Promise<boolean>((resolve) => {
    const settle = (ready: boolean) => {
      clearTimeout(timer)
      redis.off('ready', onReady)
      redis.off('end', onEnd)
      resolve(ready)
    }
    const onReady = () => settle(true)
    const onEnd = () => settle(false)
    const timer = setTimeout(() => settle(false), leftMs)
    redis.once('ready', onReady)
    redis.once('end', onEnd)
  })
}
