import type { FastifyRequest } from 'fastify'

/**
 * Runs `work` (an admin operation that may take longer than CONNECTION_TIMEOUT_MS, e.g. a
 * rebuild over a large catalog) with the socket's idle timeout suspended, and restores it after.
 * The idle timeout (Fastify `connectionTimeout`) counts a handler still working as idleness: it
 * would destroy the socket with no answer at all while the operation went on to completion. The
 * whole request was received before the handler ran, so REQUEST_TIMEOUT_MS no longer applies; a
 * client that gives up closes its own socket. Requests without a real socket (inject) run as is.
 */
export async function withoutIdleTimeout<T>(request: FastifyRequest, work: () => Promise<T>): Promise<T> {
  const socket = request.raw.socket as { timeout?: number; setTimeout?: (ms: number) => unknown } | undefined
  if (typeof socket?.setTimeout !== 'function') return work()
  const idleMs = socket.timeout ?? 0
  socket.setTimeout(0)
  try {
    return await work()
  } finally {
    // the answer is sent next; an idle keep-alive socket then gets KEEP_ALIVE_TIMEOUT_MS from Node
    socket.setTimeout(idleMs)
  }
}
