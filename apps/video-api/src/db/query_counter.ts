import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  UnknownRow,
} from 'kysely'
import { Counter, type Registry } from 'prom-client'

/**
 * A Kysely plugin counting every statement the app executes (builders, raw `sql`,
 * `executeQuery(CompiledQuery)` as floodgate's SqlExecutor runs it, statements inside
 * transactions), exported as `db_queries_total` on /metrics: the benchmark's per-instance
 * database load. Counted when a result comes back: a compiled statement skips
 * `transformQuery`, and a statement that failed is not counted.
 */
export class QueryCounter implements KyselyPlugin {
  private count = 0

  transformQuery(args: PluginTransformQueryArgs): PluginTransformQueryArgs['node'] {
    return args.node
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.count++
    return Promise.resolve(args.result)
  }

  /** Registers `db_queries_total` (statements executed by this app) on `registry`. */
  register(registry: Registry): void {
    const counter = this
    new Counter({
      name: 'db_queries_total',
      help: 'Database statements executed by this app (Kysely plugin)',
      registers: [registry],
      collect() {
        this.reset()
        this.inc(counter.count)
      },
    })
  }
}
