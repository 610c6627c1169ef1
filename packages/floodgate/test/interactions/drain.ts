import { setTimeout as sleep } from 'node:timers/promises'
import type { StreamGroupConsumer } from '../../src/stream/index.js'

/** Waits until the group has nothing pending and nothing undelivered (two checks in a row). */
export async function waitDrained(consumer: StreamGroupConsumer, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let streak = 0
  while (streak < 2) {
    const lag = await consumer.maintain()
    streak = lag.pending === 0 && lag.undelivered === 0 ? streak + 1 : 0
    if (Date.now() > deadline) throw new Error(`flush did not drain: ${JSON.stringify(lag)}`)
    await sleep(50)
  }
}
