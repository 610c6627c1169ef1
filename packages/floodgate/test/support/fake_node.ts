import { createHash } from 'node:crypto'
import { createServer, type Server, type Socket } from 'node:net'

/**
 * How a {@link FakeNode} answers: `dead` closes every connection at once (a killed node);
 * `rejoining` is a failed master restarted at its address that has not rejoined yet (every keyed
 * command CLUSTERDOWN, WAIT refused as on a replica); `clusterDown` is a healthy master while the
 * cluster is down (keyed commands CLUSTERDOWN, WAIT answers 1).
 */
export type FakeNodeMode = 'dead' | 'rejoining' | 'clusterDown'

/**
 * A RESP server on 127.0.0.1 that plays a Redis Cluster node in a state a real cluster holds only
 * for a moment, so a test can hold it as long as it needs. Answers what ioredis sends on connect
 * (INFO, CLIENT, SELECT: OK), CLUSTER SLOTS (itself, every slot) and SCRIPT LOAD (the SHA1);
 * EVALSHA, EVAL, GET and SET with CLUSTERDOWN, WAIT per its mode.
 */
export class FakeNode {
  mode: FakeNodeMode = 'rejoining'
  /** Connections accepted so far. */
  connections = 0
  /** EVALSHA / EVAL commands answered so far. */
  scriptCalls = 0
  /** GET / SET commands answered so far. */
  keyCalls = 0
  private readonly sockets = new Set<Socket>()

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<FakeNode> {
    let node: FakeNode | undefined
    const server = createServer((socket) => node?.accept(socket))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    node = new FakeNode(server, typeof address === 'object' && address ? address.port : 0)
    return node
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise((resolve) => this.server.close(resolve))
  }

  private accept(socket: Socket): void {
    this.connections++
    if (this.mode === 'dead') {
      socket.destroy()
      return
    }
    this.sockets.add(socket)
    socket.on('close', () => this.sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    let buffered = ''
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1')
      for (;;) {
        const parsed = parseCommand(buffered)
        if (parsed === undefined) return
        buffered = buffered.slice(parsed.length)
        socket.write(this.answer(parsed.args))
      }
    })
  }

  private answer(args: string[]): string {
    const name = (args[0] ?? '').toLowerCase()
    if (name === 'info') return bulk('# Server\r\nloading:0\r\n')
    const sub = (args[1] ?? '').toLowerCase()
    if (name === 'cluster' && sub === 'slots')
      return `*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n${bulk('127.0.0.1')}:${this.port}\r\n`
    if (name === 'get' || name === 'set') {
      this.keyCalls++
      return '-CLUSTERDOWN The cluster is down\r\n'
    }
    if (name === 'script' && sub === 'load')
      return bulk(
        createHash('sha1')
          .update(Buffer.from(args[2] ?? '', 'latin1'))
          .digest('hex'),
      )
    if (name === 'evalsha' || name === 'eval') {
      this.scriptCalls++
      return '-CLUSTERDOWN The cluster is down\r\n'
    }
    if (name === 'wait')
      return this.mode === 'rejoining' ? '-ERR WAIT cannot be used with replica instances.\r\n' : ':1\r\n'
    return '+OK\r\n'
  }
}

function bulk(text: string): string {
  return `$${Buffer.byteLength(text, 'latin1')}\r\n${text}\r\n`
}

/** One RESP array of bulk strings at the start of `input` and its length, or undefined if incomplete. */
function parseCommand(input: string): { args: string[]; length: number } | undefined {
  let at = 0
  const line = () => {
    const end = input.indexOf('\r\n', at)
    if (end < 0) return undefined
    const text = input.slice(at, end)
    at = end + 2
    return text
  }
  const head = line()
  if (head === undefined || !head.startsWith('*')) return undefined
  const args: string[] = []
  for (let i = 0; i < Number(head.slice(1)); i++) {
    const size = line()
    if (size === undefined) return undefined
    const n = Number(size.slice(1))
    if (input.length < at + n + 2) return undefined
    args.push(input.slice(at, at + n))
    at += n + 2
  }
  return { args, length: at }
}
