import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy on 127.0.0.1 in front of one Redis port that can turn new connections away: while
 * it refuses, a connection is accepted and closed at once, before any reply (what a client meets
 * when Redis is at `maxclients`, a balancer has no backend, or its own connect timed out), while
 * the connections already through keep forwarding both ways.
 */
export class ConnectionGate {
  private readonly sockets = new Set<Socket>()
  private passFirst = Number.POSITIVE_INFINITY
  /** Connections let through so far. */
  passed = 0
  /** Connections turned away so far. */
  refused = 0

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a port chosen by the OS and forwards each connection to `targetPort`. */
  static async start(targetPort: number): Promise<ConnectionGate> {
    let gate: ConnectionGate | undefined
    const server = createServer((client) => gate?.accept(client, targetPort))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    gate = new ConnectionGate(server, typeof address === 'object' && address ? address.port : 0)
    return gate
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** Lets the first `count` connections through (counted from the start), then refuses new ones until {@link open}. */
  refuseAfter(count: number): void {
    this.passFirst = count
  }

  /** Refuses every new connection until {@link open}. */
  refuse(): void {
    this.passFirst = this.passed
  }

  /** Lets every new connection through. */
  open(): void {
    this.passFirst = Number.POSITIVE_INFINITY
  }

  /** Closes every connection and the listener. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise((resolve) => this.server.close(resolve))
  }

  private accept(client: Socket, targetPort: number): void {
    if (this.passed >= this.passFirst) {
      this.refused++
      client.destroy()
      return
    }
    this.passed++
    const upstream = connect(targetPort, '127.0.0.1')
    for (const socket of [client, upstream]) {
      this.sockets.add(socket)
      socket.on('error', () => socket.destroy())
      socket.on('close', () => {
        this.sockets.delete(socket)
        ;(socket === client ? upstream : client).destroy()
      })
    }
    client.pipe(upstream)
    upstream.pipe(client)
  }
}
