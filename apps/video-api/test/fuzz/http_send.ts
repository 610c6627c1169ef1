import http from 'node:http'
import type { FuzzRequest } from './broken_requests.js'

/** What came back: status, headers (lower-case names) and the body as text. */
export interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/**
 * Sends requests to 127.0.0.1:`port` over one keep-alive connection at a time (a fresh one after
 * the server closes it, as it does after a 431 or a malformed request). A request with no complete
 * answer within `timeoutMs` (ms), or a connection reset before the answer, is an error: the
 * service must answer everything it is sent.
 */
export class Sender {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

  constructor(
    private readonly port: number,
    private readonly timeoutMs = 10_000,
  ) {}

  send(request: FuzzRequest): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...request.headers }
      // framed either way: Node's client sends a GET or DELETE body unframed unless told
      if (request.body !== undefined)
        if (request.chunked) headers['transfer-encoding'] = 'chunked'
        else headers['content-length'] = request.body.length
      let answered = false
      const req = http.request(
        {
          host: '127.0.0.1',
          port: this.port,
          method: request.method,
          path: request.target,
          headers,
          agent: this.agent,
          timeout: this.timeoutMs,
        },
        (res) => {
          answered = true
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          )
          res.on('close', () => {
            if (!res.complete) reject(new Error(`the answer (${res.statusCode}) was cut off`))
          })
        },
      )
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)))
      // after the answer (say a 413 while the body was still going out) a reset is the server's right
      req.on('error', (error) => {
        if (!answered) reject(error)
      })
      if (request.body !== undefined) req.write(request.body)
      req.end()
    })
  }

  close(): void {
    this.agent.destroy()
  }
}
