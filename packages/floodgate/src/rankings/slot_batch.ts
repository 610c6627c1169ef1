import type { ChainableCommander, Cluster } from 'ioredis'
import { StoreUnavailableError } from '../errors/index.js'
import { keySlot } from '../redis/cluster_slot.js'
import { isCluster, type RedisClient } from '../redis/index.js'
import { execAll } from './pipeline_results.js'

/**
 * A batch of single-key commands sent as pipelines: ONE pipeline (one round
 * trip) on a single node; on Redis Cluster, where ioredis refuses a pipeline
 * whose keys live on different nodes, one pipeline per node (per slot group:
 * the slots served by the same master and replicas in the client's slot map),
 * all sent at once (still one round trip of latency, in parallel). With
 * hundreds of interaction partitions that is one pipeline per master, not one
 * per partition. A slot missing from the map (a refresh in progress) gets a
 * pipeline of its own hash tag. Commands with the same tag (e.g. every key of
 * one interaction partition) always share a pipeline.
 * Replies come back in the order the commands were added.
 */
export class SlotBatch {
  private readonly commands: { tag: string; build: (p: ChainableCommander) => unknown }[] = []

  constructor(private readonly redis: RedisClient) {}

  /** Adds one command on `key` (pass `''` for a keyless command such as TIME). */
  add(key: string, build: (p: ChainableCommander) => unknown): this {
    this.commands.push({ tag: hashTag(key), build })
    return this
  }

  /** Number of commands added. */
  get length(): number {
    return this.commands.length
  }

  /**
   * On an auto-pipelining single-node client: the commands are issued in one tick, so the client
   * sends them in one pipeline (same order, one round trip) together with whatever else this
   * tick sends, in one socket write, instead of one write per explicit pipeline.
   */
  private async execAutoPipelined(what: string): Promise<unknown[]> {
    const client = this.redis as unknown as ChainableCommander
    const settled = await Promise.allSettled(this.commands.map((c) => c.build(client) as Promise<unknown>))
    return settled.map((r) => {
      if (r.status === 'fulfilled') return r.value
      const error = r.reason as unknown
      const message = error instanceof Error ? error.message : String(error)
      throw new StoreUnavailableError(`${what}: ${message}`, { cause: error })
    })
  }

  /**
   * Sends everything and returns the replies in order.
   * @throws {StoreUnavailableError} when any pipeline or command fails.
   */
  async exec(what: string): Promise<unknown[]> {
    if (!isCluster(this.redis)) {
      if (autoPipelined(this.redis)) return this.execAutoPipelined(what)
      const pipeline = this.redis.pipeline()
      for (const c of this.commands) c.build(pipeline)
      return execAll(pipeline, what)
    }
    const slots = (this.redis as Cluster).slots
    const groups = new Map<string, { pipeline: ChainableCommander; positions: number[] }>()
    const groupOfTag = new Map<string, string>()
    this.commands.forEach((c, i) => {
      let name = groupOfTag.get(c.tag)
      if (name === undefined) {
        // a slot's nodes, joined, name its slot group; keyless commands ('') get a pipeline of their own
        const nodes = c.tag === '' ? undefined : slots[keySlot(c.tag)]
        name = nodes && nodes.length > 0 ? `n:${nodes.join(',')}` : `t:${c.tag}`
        groupOfTag.set(c.tag, name)
      }
      let group = groups.get(name)
      if (!group) {
        group = { pipeline: this.redis.pipeline(), positions: [] }
        groups.set(name, group)
      }
      c.build(group.pipeline)
      group.positions.push(i)
    })
    const out: unknown[] = new Array(this.commands.length)
    await Promise.all(
      [...groups.values()].map(async (group) => {
        const replies = await execAll(group.pipeline, what)
        group.positions.forEach((position, j) => {
          out[position] = replies[j]
        })
      }),
    )
    return out
  }
}

/** True when the client merges the commands of one tick into one pipeline itself (`enableAutoPipelining`). */
function autoPipelined(redis: RedisClient): boolean {
  return (redis.options as { enableAutoPipelining?: boolean }).enableAutoPipelining === true
}

/** The part of a key Redis Cluster hashes: the first non-empty `{…}`, else the whole key. */
export function hashTag(key: string): string {
  const open = key.indexOf('{')
  if (open >= 0) {
    const close = key.indexOf('}', open + 1)
    if (close > open + 1) return key.slice(open + 1, close)
  }
  return key
}
