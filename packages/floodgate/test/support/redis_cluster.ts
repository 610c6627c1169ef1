import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import { freePort } from './redis_server.js'

const run = promisify(execFile)

/** Shape of a {@link PrivateCluster}. */
export interface PrivateClusterOptions {
  /** @default 3 */
  masters?: number
  /** Replicas per master (a killed master's replica takes over only when this is ≥ 1). @default 0 */
  replicasPerMaster?: number
  /** `cluster-node-timeout` (ms): how long a master may be unreachable before a failover. @default 2000 */
  nodeTimeoutMs?: number
}

/** One `redis-server` of a {@link PrivateCluster}. */
export interface ClusterNode {
  port: number
  /** `host:port`, as in the seed list. */
  address: string
  /** The process, while it runs. */
  child: ChildProcess | undefined
}

const live = new Set<PrivateCluster>()
process.once('exit', () => {
  for (const cluster of live) for (const node of cluster.nodes) node.child?.kill('SIGKILL')
})

/**
 * A private Redis Cluster on free ports (one `redis-server` child process per
 * node, no persistence, files in a temporary folder) that a test may damage:
 * kill a master to force a failover, without touching the shared Redis or the
 * CI cluster. Killed with the test process if the test forgets {@link destroy}.
 * For a long-lived cluster shared by many test files use
 * `scripts/redis-cluster/start.sh` and `FLOODGATE_TEST_REDIS_CLUSTER` instead.
 */
export class PrivateCluster {
  readonly dir: string
  readonly nodes: ClusterNode[]
  private readonly nodeTimeoutMs: number

  private constructor(ports: readonly number[], nodeTimeoutMs: number) {
    this.dir = mkdtempSync(join(tmpdir(), 'fg-cluster-'))
    this.nodes = ports.map((port) => ({ port, address: `127.0.0.1:${port}`, child: undefined }))
    this.nodeTimeoutMs = nodeTimeoutMs
  }

  /** Starts the nodes, creates the cluster and waits for `cluster_state:ok` on every node. */
  static async start(options: PrivateClusterOptions = {}): Promise<PrivateCluster> {
    const masters = options.masters ?? 3
    const replicas = options.replicasPerMaster ?? 0
    // a port freePort found free (or its cluster bus port, + 10000) can be bound by another
    // process before redis-server binds it: that node exits, and the cluster starts on new ports
    for (let attempt = 1; ; attempt++) {
      const ports: number[] = []
      while (ports.length < masters * (1 + replicas)) {
        const port = await freePort()
        if (port < 55_535 && !ports.includes(port)) ports.push(port)
      }
      const cluster = new PrivateCluster(ports, options.nodeTimeoutMs ?? 2000)
      live.add(cluster)
      try {
        for (const node of cluster.nodes) cluster.spawnNode(node)
        for (const node of cluster.nodes) await waitForPing(node)
        await run('redis-cli', [
          '--cluster',
          'create',
          ...cluster.nodes.map((n) => n.address),
          '--cluster-replicas',
          String(replicas),
          '--cluster-yes',
        ])
        await cluster.waitForOk()
        await cluster.waitForReplicas()
        return cluster
      } catch (error) {
        await cluster.destroy()
        if (!(error instanceof NodeExitedError) || attempt === 3) throw error
      }
    }
  }

  /** The seed list, `127.0.0.1:<port>` per node. */
  get seeds(): string[] {
    return this.nodes.map((n) => n.address)
  }

  /** Nodes whose process runs. */
  get running(): ClusterNode[] {
    return this.nodes.filter((n) => n.child !== undefined)
  }

  /** Port of the master that serves `slot` now, as the running nodes see it. */
  async masterOf(slot: number): Promise<number> {
    for (const node of this.running) {
      const admin = adminClient(node.port)
      try {
        const slots = (await admin.call('CLUSTER', 'SLOTS')) as [
          number,
          number,
          [string, number, ...unknown[]],
        ][]
        for (const [from, to, [, port]] of slots) if (slot >= from && slot <= to) return port
      } catch {
        // ask the next node
      } finally {
        admin.disconnect()
      }
    }
    throw new Error(`no running node knows who serves slot ${slot}`)
  }

  /** Role of the node on `port` (`master` or `slave`). */
  async role(port: number): Promise<string> {
    const admin = adminClient(port)
    try {
      const [role] = (await admin.call('ROLE')) as [string, ...unknown[]]
      return role
    } finally {
      admin.disconnect()
    }
  }

  /**
   * `CONFIG SET name value` on the node at `port`, e.g. `hz 100`: Redis times WAIT out on its
   * server cron, up to 1000/hz ms late (100 ms at the default hz 10).
   */
  async configSet(port: number, name: string, value: string): Promise<void> {
    const admin = adminClient(port)
    try {
      await admin.config('SET', name, value)
    } finally {
      admin.disconnect()
    }
  }

  /** SIGKILLs the node on `port` (no clean shutdown) and waits for its process to exit. */
  async kill(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port)
    const child = node?.child
    if (!node || !child) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
    node.child = undefined
  }

  /**
   * Starts a killed node again on its port, with its cluster config file and no data: it rejoins
   * the cluster and, when a replica took its slots meanwhile, becomes that master's replica and
   * syncs (wait with {@link waitForReplicas}).
   */
  async restart(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port)
    if (!node || node.child) return
    this.spawnNode(node)
    await waitForPing(node)
  }

  /**
   * Waits until every running node reports `cluster_state:ok` and every slot is
   * served by a running master (after a kill: a replica has been promoted).
   * @throws {Error} after `timeoutMs`.
   */
  async waitForOk(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    const runningPorts = new Set(this.running.map((n) => n.port))
    while (Date.now() < deadline) {
      if (await this.allOk(runningPorts)) return
      await sleep(100)
    }
    throw new Error(`cluster did not reach cluster_state:ok within ${timeoutMs} ms`)
  }

  /**
   * Waits until every running replica has synced with its master
   * (`master_link_status:up`). A replica that never synced is not eligible for
   * failover, so tests that kill a master wait for this first.
   * @throws {Error} after `timeoutMs`.
   */
  async waitForReplicas(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    for (const node of this.running) {
      for (;;) {
        const admin = adminClient(node.port)
        const info = await admin.info('replication').catch(() => '')
        admin.disconnect()
        if (info.includes('role:master') || info.includes('master_link_status:up')) break
        if (Date.now() > deadline) throw new Error(`replica ${node.port} did not sync within ${timeoutMs} ms`)
        await sleep(100)
      }
    }
  }

  /** Kills every node and removes the folder. */
  async destroy(): Promise<void> {
    for (const node of this.nodes) await this.kill(node.port)
    live.delete(this)
    rmSync(this.dir, { recursive: true, force: true })
  }

  private async allOk(runningPorts: ReadonlySet<number>): Promise<boolean> {
    for (const port of runningPorts) {
      const admin = adminClient(port)
      try {
        const info = String(await admin.call('CLUSTER', 'INFO'))
        if (!info.includes('cluster_state:ok')) return false
        const slots = (await admin.call('CLUSTER', 'SLOTS')) as [
          number,
          number,
          [string, number, ...unknown[]],
        ][]
        let covered = 0
        for (const [from, to, [, master]] of slots) {
          if (!runningPorts.has(master)) return false
          covered += to - from + 1
        }
        if (covered !== 16_384) return false
      } catch {
        return false
      } finally {
        admin.disconnect()
      }
    }
    return true
  }

  private spawnNode(node: ClusterNode): void {
    const args = ['--port', String(node.port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes']
    args.push('--cluster-config-file', join(this.dir, `nodes-${node.port}.conf`))
    args.push('--cluster-node-timeout', String(this.nodeTimeoutMs))
    args.push('--save', '', '--appendonly', 'no', '--dir', this.dir)
    node.child = spawn('redis-server', args, { stdio: 'ignore' })
    const child = node.child
    child.once('exit', () => {
      if (node.child === child) node.child = undefined
    })
  }
}

function adminClient(port: number): Redis {
  const client = new Redis(port, '127.0.0.1', {
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 500,
    commandTimeout: 1000,
  })
  client.on('error', () => {}) // a killed node refuses connections: expected
  return client
}

/** A node's redis-server exited while starting (typically: its port or bus port was taken). */
class NodeExitedError extends Error {}

async function waitForPing(node: ClusterNode): Promise<void> {
  const { port } = node
  for (let i = 0; i < 100; i++) {
    if (node.child === undefined)
      throw new NodeExitedError(`redis-server on port ${port} exited while starting`)
    const admin = adminClient(port)
    const ok = await admin.ping().then(
      () => true,
      () => false,
    )
    admin.disconnect()
    if (ok) return
    await sleep(50)
  }
  throw new Error(`redis-server on port ${port} did not start`)
}
