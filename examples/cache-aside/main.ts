// Cache-aside: 50 concurrent reads of a cold key run the loader once; a miss answers undefined.
import { createCache, notFound } from 'floodgate/cache'
import { cleanUp, connect, prefix } from '../connect.js'

interface Video {
  id: string
  title: string
}
const database = new Map<string, Video>([['v1', { id: 'v1', title: 'Rivers' }]])
let loads = 0

const redis = await connect()
const videos = createCache<Video>({ redis, prefix, name: 'video' })
await videos.ready

const load = async (id: string) => {
  loads++
  return database.get(id) ?? notFound()
}
const answers = await Promise.all(Array.from({ length: 50 }, () => videos.getOrLoad('v1', load)))
const missing = await videos.getOrLoad('nope', load)

console.log(`cache-aside: 50 reads of v1, ${loads} loads in all, v1 = ${JSON.stringify(answers[0])}`)
const wrong = answers.some((v) => v?.title !== 'Rivers')
if (loads !== 2 || wrong || missing !== undefined) process.exit(1)
await cleanUp(redis)
await redis.quit()
process.exit(0) // the cache's invalidation subscriber keeps its own connection open
