import { once } from 'node:events'
import net from 'node:net'

/** One HTTP/1.1 answer read off a socket: status, headers (lower-case names), body. */
export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * A connection to 127.0.0.1:`port` that writes bytes as given (errors of Node's HTTP parser never
 * reach inject()) and collects what comes back until the server closes it.
 */
export class RawConnection {
  private received = ''
  private readonly closed: Promise<unknown>

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (data: Buffer) => {
      this.received += data.toString('latin1')
    })
    socket.on('error', () => {})
    this.closed = once(socket, 'close')
  }

  static async open(port: number): Promise<RawConnection> {
    const socket = net.connect(port, '127.0.0.1')
    await once(socket, 'connect')
    return new RawConnection(socket)
  }

  write(bytes: string | Buffer): void {
    this.socket.write(bytes)
  }

  /** Every answer the server sent, once it has closed the connection. */
  async answers(): Promise<RawAnswer[]> {
    await this.closed
    return parseAnswers(this.received)
  }
}

/** Sends `request` on a new connection and returns the first answer (send `Connection: close`, or bytes the server closes on). */
export async function exchange(port: number, request: string | Buffer): Promise<RawAnswer> {
  const connection = await RawConnection.open(port)
  connection.write(request)
  const [answer] = await connection.answers()
  if (!answer) throw new Error('the server closed the connection without an answer')
  return answer
}

/** Splits HTTP/1.1 answers with a Content-Length (all the service sends) off `text`. */
function parseAnswers(text: string): RawAnswer[] {
  const answers: RawAnswer[] = []
  let rest = text
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n')
    if (end < 0) break
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const length = Number(headers['content-length'] ?? 0)
    // `text` is latin1: one character per byte
    const body = Buffer.from(rest.slice(end + 4, end + 4 + length), 'latin1').toString('utf8')
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body })
    rest = rest.slice(end + 4 + length)
  }
  return answers
}
