import { type ChildProcess, spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort } from '@floodgate/test-support'
import { fields } from '../../src/config/fields.js'

const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url))

/** A real `src/main.ts` process. */
export interface ServiceProcess {
  port: number
  /** `http://127.0.0.1:<port>` */
  base: string
  child: ChildProcess
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** The last 20,000 characters of its stdout and stderr. */
  output(): string
}

/** Per-instance additions to {@link startServices}. */
export interface StartOptions {
  /** Variables of instance `index` (0-based), over the common `env`. */
  instanceEnv?: (index: number) => Record<string, string>
  /** Runs once every process is spawned, alongside the wait for `/readyz` (which may need it to finish). */
  whileStarting?: (services: readonly ServiceProcess[]) => Promise<void>
}

/**
 * Starts `count` main.ts processes with the **default configuration**: every configuration
 * variable of src/config/fields.ts (and CONFIG_FILE) inherited from this process's environment
 * is removed, then `env` (and `options.instanceEnv`) and PORT (a free port each) are set — so
 * the caller lists, and can justify, every override. Resolves once all answer `GET /readyz` 200
 * (within `readyWithinMs`) and `options.whileStarting` is done.
 * @throws when a process exits or is not ready in time (its output in the message).
 */
export async function startServices(
  count: number,
  env: Record<string, string>,
  readyWithinMs = 120_000,
  options: StartOptions = {},
): Promise<ServiceProcess[]> {
  const base: NodeJS.ProcessEnv = { ...process.env }
  for (const field of Object.values(fields)) delete base[field.env]
  delete base.CONFIG_FILE
  const services: ServiceProcess[] = []
  for (let i = 0; i < count; i++) {
    const port = await freePort()
    services.push(spawnService(port, { ...base, ...env, ...options.instanceEnv?.(i), PORT: String(port) }))
  }
  await Promise.all([options.whileStarting?.(services), ...services.map((s) => waitReady(s, readyWithinMs))])
  return services
}

/** Resolves once `service` answers `GET /healthz` (it listens: the app is built); false if it exited or `withinMs` passed. */
export async function listening(service: ServiceProcess, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs
  while (Date.now() < deadline && isAlive(service)) {
    const ok = await fetch(`${service.base}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    )
    if (ok) return true
    await sleep(100)
  }
  return false
}

/** Spawns main.ts with exactly `env` (PORT included) on `port`; does not wait for it. */
export function spawnService(port: number, env: NodeJS.ProcessEnv): ServiceProcess {
  const child = spawn(process.execPath, ['--conditions=floodgate-source', '--import', 'tsx', main], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  for (const stream of [child.stdout, child.stderr])
    stream?.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-20_000)
    })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  return { port, base: `http://127.0.0.1:${port}`, child, exited, output: () => out }
}

async function waitReady(service: ServiceProcess, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs
  while (Date.now() < deadline && isAlive(service)) {
    const ok = await fetch(`${service.base}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    )
    if (ok) return
    await sleep(200)
  }
  throw new Error(`main.ts on ${service.port} not ready: ${service.output()}`)
}

export function isAlive(service: ServiceProcess): boolean {
  return service.child.exitCode === null && service.child.signalCode === null
}

/** SIGKILLs the processes still running and waits for their exit (teardown: nothing to drain). */
export async function killServices(services: readonly ServiceProcess[]): Promise<void> {
  for (const service of services) if (isAlive(service)) service.child.kill('SIGKILL')
  await Promise.all(services.map((s) => s.exited))
}
