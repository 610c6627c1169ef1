// One process of the multi-process stampede: waits for "go" on a pub/sub
// channel, then fires `callers` concurrent reads of one cold key through the
// adapter; the loader INCRs a shared counter and sleeps `loaderMs`.
// argv: <kind> <prefix> <key> <callers> <loaderMs>
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { type AdapterKind, makeAdapter, REDIS_URL } from './adapters.js'

const [kind, prefix, key, callers, loaderMs] = process.argv.slice(2) as [
  AdapterKind,
  string,
  string,
  string,
  string,
]
const adapter = await makeAdapter(kind, prefix)
const plain = new Redis(REDIS_URL)
const sub = new Redis(REDIS_URL)
await sub.subscribe(`${prefix}:go`)
process.stdout.write(`${JSON.stringify({ ready: true })}\n`)
await new Promise<void>((resolve) => sub.once('message', () => resolve()))
const latencies = await Promise.all(
  Array.from({ length: Number(callers) }, async () => {
    const started = performance.now()
    await adapter.get(key, async () => {
      await plain.incr(`${prefix}:loads`)
      await sleep(Number(loaderMs))
      return { id: key, title: `video ${key}` }
    })
    return performance.now() - started
  }),
)
process.stdout.write(`${JSON.stringify({ latencies })}\n`)
await adapter.close()
plain.disconnect()
sub.disconnect()
process.exit(0)
