// The ceilings of bench/cache/http.ts: a bare Fastify process (Fastify's defaults, no logger, no
// hooks, no schema) answering GET /videos/:id in its own process, either
// - with one constant video (BARE_VIDEO_JSON, mode `bare`: the ceiling), or
// - from a Map of every public video's JSON text (BARE_CATALOG_FILE, a JSON object id → text; mode
//   `catalog`): the same Zipf(1) ids as the service, so the same working set, with nothing but a
//   Map lookup per request (the ceiling of any in-process cache; unknown ids are 404).
//   BARE_VIDEO_JSON='{"id":"1",…}' PORT=3000 node --import tsx bench/cache/bare_server.ts
// The videos are real rows of the bench database in the API's shape (http.ts reads them), so the
// bare answers are as long as the service's. Prints `listening` when it accepts connections.
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'

const app = Fastify()
const catalogFile = process.env.BARE_CATALOG_FILE
if (catalogFile) {
  const catalog = new Map(
    Object.entries(JSON.parse(readFileSync(catalogFile, 'utf8')) as Record<string, string>),
  )
  app.get<{ Params: { id: string } }>('/videos/:id', (request, reply) => {
    const json = catalog.get(request.params.id)
    if (json === undefined) return reply.code(404).send({ code: 'NOT_FOUND' })
    // pre-serialized text, as the service's hot path sends it
    return reply.type('application/json; charset=utf-8').send(json)
  })
} else {
  const video = JSON.parse(process.env.BARE_VIDEO_JSON ?? '{}') as Record<string, unknown>
  app.get('/videos/:id', async () => video)
}
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
process.stdout.write('listening\n')
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)))
