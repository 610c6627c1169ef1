import { connect, createServer, type Server, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { TEST_DATABASE_URL } from '@floodgate/test-support'

/**
 * A TCP proxy in front of the shared PostgreSQL that a test breaks and restores: the service
 * processes behind it lose their database while every other test file (and the test's own checks,
 * on {@link TEST_DATABASE_URL} directly) keep theirs — the shared server is never stopped.
 *
 * Broken: the port stops listening, so a new connection is refused (`ECONNREFUSED`, as after
 * `pg_ctl stop`), and every proxied connection is reset (its client reads `ECONNRESET` or
 * "Connection terminated unexpectedly", as when the server dies under a query). Restored: it
 * listens on the same port again.
 */
export class PgProxy {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()

  private constructor(
    private readonly target: { host: string; port: number },
    /** The proxy's port on 127.0.0.1. */
    readonly port: number,
  ) {}

  /** Listens on a free port of 127.0.0.1, forwarding to `upstreamUrl`'s host and port. */
  static async start(upstreamUrl: string = TEST_DATABASE_URL): Promise<PgProxy> {
    const url = new URL(upstreamUrl)
    const target = { host: url.hostname || '127.0.0.1', port: Number(url.port || 5432) }
    const probe = createServer()
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject)
      probe.listen(0, '127.0.0.1', resolve)
    })
    const address = probe.address()
    const port = typeof address === 'object' && address ? address.port : 0
    const proxy = new PgProxy(target, port)
    proxy.server = probe
    probe.on('connection', (socket) => proxy.forward(socket))
    return proxy
  }

  /** `upstreamUrl` with its host and port replaced by the proxy's. */
  url(upstreamUrl: string = TEST_DATABASE_URL): string {
    const url = new URL(upstreamUrl)
    url.hostname = '127.0.0.1'
    url.port = String(this.port)
    return url.toString()
  }

  /** Connections open through the proxy right now (client side). */
  get open(): number {
    return this.sockets.size / 2
  }

  /** Stops listening (new connections are refused) and resets every open connection. */
  async break(): Promise<void> {
    const server = this.server
    this.server = undefined
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : undefined
    for (const socket of this.sockets) {
      // RST to the service's side (ECONNRESET there); a plain close to PostgreSQL's
      if (socket.remoteAddress === this.target.host && socket.remotePort === this.target.port)
        socket.destroy()
      else socket.resetAndDestroy()
    }
    await closed
  }

  /**
   * Listens on the same port again. Retries for up to 5 s while the port is taken (another
   * process could bind it in between; unlikely for a port the OS handed out).
   * @throws the listen error when the port stays taken.
   */
  async restore(): Promise<void> {
    if (this.server) return
    for (let attempt = 0; ; attempt++) {
      const server = createServer((socket) => this.forward(socket))
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject)
          server.listen(this.port, '127.0.0.1', resolve)
        })
        this.server = server
        return
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 50) throw error
        await sleep(100)
      }
    }
  }

  /** Breaks the proxy for good. */
  close(): Promise<void> {
    return this.break()
  }

  private forward(client: Socket): void {
    const upstream = connect(this.target.port, this.target.host)
    for (const socket of [client, upstream]) {
      this.sockets.add(socket)
      socket.setNoDelay(true)
      socket.once('close', () => this.sockets.delete(socket))
    }
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
    client.pipe(upstream)
    upstream.pipe(client)
  }
}
