import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy on 127.0.0.1 in front of one port that a test can stall: connections stay
 * open but nothing is forwarded either way (a proxy that stops forwarding), while clients
 * connected to the target directly go on as usual. It can also hold only the replies of some
 * connections ({@link holdReplies}): their commands still reach Redis and run.
 */
export class StallingProxy {
  private readonly sockets = new Set<Socket>()
  /** Per upstream socket, the first bytes its client sent (the handshake names the connection). */
  private readonly openings = new Map<Socket, string>()
  private readonly held = new Set<Socket>()
  private stalled = false

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a port chosen by the OS and forwards each connection to `targetPort`. */
  static async start(targetPort: number): Promise<StallingProxy> {
    let proxy: StallingProxy | undefined
    const server = createServer((client) => proxy?.pipe(client, targetPort))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    proxy = new StallingProxy(server, typeof address === 'object' && address ? address.port : 0)
    return proxy
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** Stops forwarding on every connection, open or future (the sockets stop reading). */
  stall(): void {
    this.stalled = true
    for (const socket of this.sockets) socket.pause()
  }

  /**
   * Stops forwarding replies to the connections whose opening bytes contain `marker` (e.g. a
   * `CLIENT SETNAME` value), so the reply of a command Redis already ran is delayed at will.
   */
  holdReplies(marker: string): void {
    for (const [upstream, opening] of this.openings) {
      if (!opening.includes(marker)) continue
      upstream.pause()
      this.held.add(upstream)
    }
  }

  /** Forwards the held replies and every later one. */
  releaseReplies(): void {
    for (const upstream of this.held) upstream.resume()
    this.held.clear()
  }

  /** Closes every connection and the listener. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise((resolve) => this.server.close(resolve))
  }

  private pipe(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1')
    for (const socket of [client, upstream]) {
      this.sockets.add(socket)
      socket.on('error', () => socket.destroy())
      socket.on('close', () => this.sockets.delete(socket))
      if (this.stalled) socket.pause()
    }
    this.openings.set(upstream, '')
    client.on('data', (chunk: Buffer) => {
      const opening = this.openings.get(upstream)
      if (opening !== undefined && opening.length < 1024)
        this.openings.set(upstream, opening + chunk.toString())
    })
    client.pipe(upstream)
    upstream.pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => {
      this.openings.delete(upstream)
      this.held.delete(upstream)
      client.destroy()
    })
  }
}
