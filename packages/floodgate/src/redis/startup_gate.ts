import type { RedisClient } from './types.js'

interface Gate {
  /** `Date.now()` when a primitive first used the client (ms epoch). */
  readonly openedAtMs: number
  /** Resolves on the client's first `ready`. */
  readonly connected: Promise<void>
  isReady: boolean
}

const gates = new WeakMap<RedisClient, Gate>()

function gateOf(redis: RedisClient): Gate {
  const known = gates.get(redis)
  if (known) return known
  const isReady = redis.status === 'ready'
  const gate: Gate = {
    openedAtMs: Date.now(),
    isReady,
    connected: isReady
      ? Promise.resolve()
      : new Promise<void>((resolve) =>
          redis.once('ready', () => {
            gate.isReady = true
            resolve()
          }),
        ),
  }
  gates.set(redis, gate)
  return gate
}

/**
 * Waits for the client's first connection, at most `boundMs` (ms) counted from the first time any
 * primitive used this client, so a burst of calls at start-up shares one bound. Resolves `true`
 * once the client has been ready at least once (at once afterwards, even during a later outage:
 * outages are the fallbacks' job), `false` when the bound passed first. Never rejects.
 */
export async function awaitFirstConnection(redis: RedisClient, boundMs: number): Promise<boolean> {
  const gate = gateOf(redis)
  if (gate.isReady || redis.status === 'ready') {
    gate.isReady = true
    return true
  }
  const leftMs = gate.openedAtMs + boundMs - Date.now()
  if (leftMs <= 0) return false
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), leftMs)
  })
  try {
    return await Promise.race([gate.connected.then(() => true as const), expired])
  } finally {
    clearTimeout(timer)
  }
}
