import { createServer } from 'node:net'

/**
 * Ports this process was handed: a port stays free until its server binds it, so callers that ask
 * for several before starting anything (the bench's three deployments) could get one twice.
 */
const handedOut = new Set<number>()

/**
 * A TCP port on 127.0.0.1 free right now (the OS picks it) and not returned before by this
 * process; a later bind may still race another process.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await osFreePort()
    if (handedOut.has(port)) continue
    handedOut.add(port)
    return port
  }
}

function osFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}
