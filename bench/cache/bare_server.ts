// The ceiling of bench/cache/http.ts: a bare Fastify process (Fastify's defaults, no logger, no
// hooks, no schema) answering GET /videos/:id with one constant video, in its own process.
//   BARE_VIDEO_JSON='{"id":"1",…}' PORT=3000 node --import tsx bench/cache/bare_server.ts
// The video is a real row of the bench database in the API's shape (http.ts reads it), so the
// bare answer is as long as the service's. Prints `listening` when it accepts connections.
import Fastify from 'fastify'

const video = JSON.parse(process.env.BARE_VIDEO_JSON ?? '{}') as Record<string, unknown>
const app = Fastify()
app.get('/videos/:id', async () => video)
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
process.stdout.write('listening\n')
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)))
