// scripts/redis-cluster/start.sh and stop.sh, as CI runs them: a 3-master,
// 3-replica cluster on free ports; a second start is a no-op; stop leaves no
// process and no folder behind.
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import { afterAll, expect, it } from 'vitest'

const run = promisify(execFile)
const scripts = fileURLToPath(new URL('../../../../scripts/redis-cluster/', import.meta.url))
const parent = mkdtempSync(join(tmpdir(), 'fg-start-script-'))
const dir = join(parent, 'cluster')

afterAll(async () => {
  await run(join(scripts, 'stop.sh'), [dir]).catch(() => undefined)
  rmSync(parent, { recursive: true, force: true })
})

async function ask(port: number, ...args: string[]): Promise<unknown> {
  const client = new Redis(port, '127.0.0.1', {
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    lazyConnect: true,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    return await client.call(args[0]!, ...args.slice(1))
  } finally {
    client.disconnect()
  }
}

it('start.sh creates a 3+3 cluster and prints its seeds; a second start reuses it; stop.sh removes it', async () => {
  const first = await run(join(scripts, 'start.sh'), [dir])
  const seeds = first.stdout.trim().split(',')
  expect(seeds).toHaveLength(6)
  expect(readFileSync(join(dir, 'nodes'), 'utf8').trim()).toBe(first.stdout.trim())
  const ports = seeds.map((s) => Number(s.split(':')[1]))

  const roles: string[] = []
  for (const port of ports) {
    expect(String(await ask(port, 'CLUSTER', 'INFO'))).toContain('cluster_state:ok')
    const [role] = (await ask(port, 'ROLE')) as [string]
    roles.push(role)
    if (role === 'slave')
      expect(String(await ask(port, 'INFO', 'replication'))).toContain('master_link_status:up')
  }
  expect(roles.sort()).toEqual(['master', 'master', 'master', 'slave', 'slave', 'slave'])

  const second = await run(join(scripts, 'start.sh'), [dir])
  expect(second.stdout.trim()).toBe(first.stdout.trim())
  expect(second.stderr).toContain('already running')

  await run(join(scripts, 'stop.sh'), [dir])
  expect(existsSync(dir)).toBe(false)
  for (const port of ports) await expect(ask(port, 'PING')).rejects.toThrow()
  await run(join(scripts, 'stop.sh'), [dir]) // twice is fine
}, 60_000)
