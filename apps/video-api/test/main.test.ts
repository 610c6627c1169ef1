import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort } from '@floodgate/test-support'
import { afterAll, describe, expect, it } from 'vitest'
import { dropSchema, testDbKind, uniqueSchema } from './support/database.js'
import { deleteByPrefix, plainTestRedisClient } from './support/redis.js'
import { serviceEnv } from './support/service_env.js'

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), 'va-main-'))
const schema = uniqueSchema('main')
// the processes share the test Redis: a key prefix of this run's own, deleted afterwards
const redisPrefix = `vatest-main-${process.pid}-${Date.now().toString(36)}`
const children: ChildProcess[] = []

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
  const redis = plainTestRedisClient()
  await deleteByPrefix(redis, `${redisPrefix}:`)
  redis.disconnect()
  if (testDbKind === 'pg') await dropSchema(schema)
  rmSync(dataDir, { recursive: true, force: true })
})

async function start(
  port: number,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; exited: Promise<number | null>; output: () => string }> {
  const env = serviceEnv({ port, redisPrefix, dataDir, schema }, extraEnv)
  const child = spawn(process.execPath, ['--conditions=floodgate-source', '--import', 'tsx', main], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let out = ''
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString()
  })
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return { child, exited, output: () => out }
}

async function waitReady(port: number, output: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`)
      if (res.status === 200) return
    } catch {}
    await sleep(100)
  }
  throw new Error(`not ready on ${port}: ${output()}`)
}

/**
 * Runs main.ts with `env` over this process's environment until it exits (SIGKILL after 30 s,
 * so a start that hangs fails instead of leaking); its exit code and stdout + stderr.
 */
async function runMainToExit(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--conditions=floodgate-source', '--import', 'tsx', main], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  let out = ''
  for (const stream of [child.stdout, child.stderr])
    stream.on('data', (d: Buffer) => {
      out += d.toString()
    })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  clearTimeout(killer)
  return { code, out }
}

describe('src/main.ts as a real process', () => {
  it('starts, seeds once, answers /readyz and the feed, shares tokens across instances, exits 0 on SIGTERM', async () => {
    // Two instances at once on one database (PGlite: one process owns the data folder, so one instance).
    const count = testDbKind === 'pg' ? 2 : 1
    const ports = await Promise.all(Array.from({ length: count }, freePort))
    const instances = await Promise.all(ports.map((port) => start(port)))
    await Promise.all(instances.map((p, i) => waitReady(ports[i]!, p.output)))

    const base = (i: number) => `http://127.0.0.1:${ports[i]}`
    const feed = (await (await fetch(`${base(0)}/feed/recommend`)).json()) as { items: { id: string }[] }
    expect(feed.items).toHaveLength(20)
    const video = await fetch(`${base(count - 1)}/videos/${feed.items[0]!.id}`)
    expect(video.status).toBe(200)

    const reg = await fetch(`${base(0)}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'smoke_user', password: 'smoke-password' }),
    })
    expect(reg.status).toBe(201)
    const { token, userId } = (await reg.json()) as { token: string; userId: string }
    // Seeded exactly once although instances raced: 10 seeded users, then ours.
    expect(Number(userId)).toBe(11)
    const create = await fetch(`${base(count - 1)}/videos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        title: 'smoke',
        coverUrl: 'https://c.example/s.jpg',
        playUrl: 'https://v.example/s.mp4',
      }),
    })
    expect(create.status).toBe(201)

    for (const p of instances) p.child.kill('SIGTERM')
    const codes = await Promise.all(instances.map((p) => p.exited))
    expect(codes, instances.map((p) => p.output()).join('\n')).toEqual(instances.map(() => 0))
  })

  it('SIGTERM with a stalled upload open: cuts it before SHUTDOWN_TIMEOUT_MS and still exits 0', async () => {
    const port = await freePort()
    const { child, exited, output } = await start(port, {
      // the cut comes 2 s before this deadline; the rest of the close (the flush consumer's last
      // blocking read, up to 1 s, then the pools) must fit in them
      SHUTDOWN_TIMEOUT_MS: '6000',
      REQUEST_TIMEOUT_MS: '60000',
    })
    await waitReady(port, output)
    const socket = net.connect(port, '127.0.0.1')
    await once(socket, 'connect')
    socket.on('error', () => {})
    // Headers and 4 of 100 body bytes, then nothing: the request never completes.
    socket.write(
      'POST /videos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"ti',
    )
    await sleep(300)
    const termAt = Date.now()
    child.kill('SIGTERM')
    expect(await exited, output()).toBe(0)
    expect(Date.now() - termAt).toBeLessThan(6000 + 2000)
    expect(output()).not.toContain('shutdown timed out')
  }, 60_000)

  it('warns at start when INTERACTION_WAIT_REPLICAS exceeds the online replicas, and still starts', async () => {
    const port = await freePort()
    // 16 (the maximum) is more than any test Redis has: the single node has none, the CI cluster one per master
    const { child, exited, output } = await start(port, { INTERACTION_WAIT_REPLICAS: '16' })
    await waitReady(port, output)
    expect(output()).toContain('INTERACTION_WAIT_REPLICAS exceeds the online replicas')
    child.kill('SIGTERM')
    expect(await exited, output()).toBe(0)
  }, 60_000)

  it('exits with a message naming the field on a bad config value', async () => {
    const { code, out } = await runMainToExit({ PORT: 'abc' })
    expect(code, out).toBe(78)
    expect(out).toContain('PORT: must be an integer 0-65535, got "abc"')
  })

  it('exits 69 with a message naming REDIS_URL when Redis does not answer there (no hang, no degraded start)', async () => {
    const port = await freePort() // nothing listens there
    const { code, out } = await runMainToExit({
      REDIS_URL: `redis://127.0.0.1:${port}`,
      PORT: '0',
      SEED_ON_EMPTY: 'false',
      DATA_DIR: join(tmpdir(), `va-main-redis-${process.pid}`),
    })
    expect(code, out).toBe(69)
    expect(out).toContain(`Redis at redis://127.0.0.1:${port}`)
    expect(out).toContain('ECONNREFUSED')
    expect(out).not.toContain('Server listening')
  }, 40_000)

  it('exits 69 naming REDIS_CLUSTER_NODES when no cluster seed answers', async () => {
    const port = await freePort() // nothing listens there
    const { code, out } = await runMainToExit({
      REDIS_URL: '',
      REDIS_CLUSTER_NODES: `127.0.0.1:${port}`,
      PORT: '0',
      SEED_ON_EMPTY: 'false',
      DATA_DIR: join(tmpdir(), `va-main-cluster-${process.pid}`),
    })
    expect(code, out).toBe(69)
    expect(out).toContain(`Redis Cluster at 127.0.0.1:${port} is not usable`)
    expect(out).toContain('REDIS_CLUSTER_NODES')
    expect(out).not.toContain('Server listening')
  }, 40_000)
})
