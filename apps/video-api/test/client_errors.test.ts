import { once } from 'node:events'
import net, { type AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './support/app.js'

// Errors of Node's HTTP parser never reach Fastify's routing or inject(): talk to a real socket.
let t: TestApp
let port = 0
beforeAll(async () => {
  t = await createTestApp('clienterr')
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as AddressInfo).port
})
afterAll(() => t.close())

async function raw(request: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let received = ''
  socket.on('data', (d: Buffer) => {
    received += d.toString()
  })
  socket.on('error', () => {})
  socket.write(request)
  await once(socket, 'close')
  return received
}

describe('socket-level client errors are problem+json', () => {
  it('headers over the limit → 431 HEADERS_TOO_LARGE', async () => {
    const res = await raw(`GET /healthz HTTP/1.1\r\nHost: t\r\nX-Junk: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(res).toMatch(/^HTTP\/1\.1 431 /)
    expect(res).toMatch(/content-type: application\/problem\+json/i)
    expect(res).toContain('"code":"HEADERS_TOO_LARGE"')
  })

  it('malformed HTTP → 400 VALIDATION_FAILED', async () => {
    const res = await raw('NOT HTTP AT ALL\r\n\r\n')
    expect(res).toMatch(/^HTTP\/1\.1 400 /)
    expect(res).toMatch(/content-type: application\/problem\+json/i)
    expect(res).toContain('"code":"VALIDATION_FAILED"')
  })
})
