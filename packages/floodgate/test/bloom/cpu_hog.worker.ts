// Worker that keeps one core busy (a neighbour under load) until killed.
import { blockLoop } from '../support/busy_loop.js'
import { report } from '../support/processes.js'

report({ ready: true })
for (;;) {
  blockLoop(1_000)
  await new Promise((resolve) => setImmediate(resolve))
}
