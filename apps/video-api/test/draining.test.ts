import { once } from 'node:events'
import net, { type AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { createTestApp, registerUser } from './support/app.js'

describe('closing (SIGTERM drain)', () => {
  it('finishes the request in flight and answers the next one on the connection 503 UNAVAILABLE problem+json', async () => {
    const t = await createTestApp('drain')
    try {
      const { token } = await registerUser(t.app, 'drainer')
      await t.app.listen({ port: 0, host: '127.0.0.1' })
      const { port } = t.app.server.address() as AddressInfo
      const socket = net.connect(port, '127.0.0.1')
      await once(socket, 'connect')
      let received = ''
      socket.on('data', (d: Buffer) => {
        received += d.toString()
      })
      const body = JSON.stringify({
        title: 'in flight while closing',
        coverUrl: 'https://c.example/a.jpg',
        playUrl: 'https://v.example/a.mp4',
      })
      // Headers and half the body: the create is in flight (routed, body pending) when close begins.
      socket.write(
        `POST /videos HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
      )
      await sleep(200)
      const closed = t.app.close()
      await sleep(100)
      socket.write(`${body.slice(10)}GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n`)
      await closed
      await once(socket, 'close')
      const responses = received.split(/(?=HTTP\/1\.1 )/)
      expect(responses[0], received).toMatch(/^HTTP\/1\.1 201 /)
      expect(responses[1], received).toMatch(/^HTTP\/1\.1 503 /)
      expect(responses[1]).toMatch(/content-type: application\/problem\+json/i)
      expect(responses[1]).toContain('"code":"UNAVAILABLE"')
      expect(responses[1]).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/i)
      const rows = await t.database.db
        .selectFrom('videos')
        .select('id')
        .where('title', '=', 'in flight while closing')
        .execute()
      expect(rows).toHaveLength(1)
    } finally {
      await t.close() // app.close() again is a no-op; deletes the prefix's keys, closes the clients
    }
  })
})
