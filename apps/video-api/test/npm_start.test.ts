import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort } from '@floodgate/test-support'
import { afterAll, describe, expect, it } from 'vitest'
import { dropSchema, testDbKind, uniqueSchema } from './support/database.js'
import { deleteByPrefix, plainTestRedisClient } from './support/redis.js'
import { serviceEnv } from './support/service_env.js'

// README's `npm start`, as a user runs it: compiled JavaScript (built by `npm ci`'s prepare), and a
// process tree in which SIGTERM to the pid `npm start` gives reaches the service.
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url))
const compiled = join(repoRoot, 'apps/video-api/dist/main.js')
const dataDir = mkdtempSync(join(tmpdir(), 'va-npm-start-'))
const schema = uniqueSchema('npmstart')
const redisPrefix = `vatest-npmstart-${process.pid}-${Date.now().toString(36)}`
const spawned: number[] = []

afterAll(async () => {
  for (const pid of spawned) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
  const redis = plainTestRedisClient()
  await deleteByPrefix(redis, `${redisPrefix}:`)
  redis.disconnect()
  if (testDbKind === 'pg') await dropSchema(schema)
  rmSync(dataDir, { recursive: true, force: true })
})

/** Pids of the direct children of `pid` (Linux /proc), with their command lines. */
function children(pid: number): { pid: number; cmd: string }[] {
  const file = `/proc/${pid}/task/${pid}/children`
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .map((child) => ({
      pid: child,
      cmd: readFileSync(`/proc/${child}/cmdline`, 'utf8').replaceAll('\0', ' ').trim(),
    }))
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

describe('npm start', () => {
  it('runs compiled JavaScript as the child of npm, and SIGTERM to npm stops the service and frees the port', async () => {
    expect(
      existsSync(compiled),
      `${compiled} is missing: \`npm ci\` (prepare) or \`npm run build\` builds it`,
    ).toBe(true)
    const port = await freePort()
    const env = serviceEnv({ port, redisPrefix, dataDir, schema, seedVideos: 50 })
    // not npm's own variables of this test run: `npm start` sets its own
    for (const key of ['NODE_OPTIONS', 'npm_lifecycle_event']) delete env[key]
    const started = performance.now()
    const npm: ChildProcess = spawn('npm', ['start'], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    spawned.push(npm.pid!)
    let out = ''
    for (const stream of [npm.stdout, npm.stderr]) stream?.on('data', (d: Buffer) => (out += d.toString()))
    const npmExit = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)))

    let ready = false
    for (let i = 0; i < 600 && !ready; i++) {
      ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (res) => res.status === 200,
        () => false,
      )
      if (!ready) await sleep(50)
    }
    expect(ready, out).toBe(true)
    console.log(
      `npm start → /readyz 200 in ${Math.round(performance.now() - started)} ms (first start, seeding)`,
    )

    // npm's only child is node on the compiled entry point (sh exec'd it): no second npm, no sh, no tsx
    const tree = children(npm.pid!)
    spawned.push(...tree.map((c) => c.pid))
    expect(tree.map((c) => c.cmd)).toEqual([expect.stringMatching(/^node .*dist\/main\.js$/)])
    const service = tree[0]!.pid

    npm.kill('SIGTERM')
    const deadline = Date.now() + 15_000
    while ((alive(service) || !(await portFree(port))) && Date.now() < deadline) await sleep(50)
    expect(alive(service), `the service (pid ${service}) outlived SIGTERM to npm start\n${out}`).toBe(false)
    expect(await portFree(port)).toBe(true)
    expect(await npmExit).toBe(0)
    expect(out).not.toMatch(/shutdown timed out/)
  }, 60_000)
})
