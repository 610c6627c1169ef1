import { openPglite } from '../../src/db/connect.js'
import { report } from '../support/workers.js'

/** Worker: at a common start time (ms epoch, argv[3]) opens the PGlite folder argv[2], holds it argv[4] ms, closes; reports. */
const [dir, startAt, holdMs] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])]
await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())))
try {
  const handle = await openPglite(dir)
  await new Promise((resolve) => setTimeout(resolve, holdMs))
  await handle.close()
  report({ ok: true })
} catch (error) {
  report({ ok: false, code: (error as { code?: unknown }).code, message: String(error) })
}
