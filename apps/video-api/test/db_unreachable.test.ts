// isDatabaseUnreachable (src/db/unreachable.ts) on the errors node-postgres really throws: a
// refused connection, a connection reset under a query (support/pg_proxy.ts broken mid-query), a
// backend terminated by the administrator (57P01), a connection timeout; and on the errors that are
// not an outage (bad SQL, bad data) — those must stay 500s and bugs. The SQLSTATEs a server
// gives only while it shuts down or starts up (57P03) are checked as data. Server only.
import { createServer, type Socket } from 'node:net'
import { freePort, TEST_DATABASE_URL } from '@floodgate/test-support'
import { OverloadedError, StoreUnavailableError } from 'floodgate'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { isDatabaseUnreachable } from '../src/db/unreachable.js'
import { testDbKind } from './support/database.js'
import { PgProxy } from './support/pg_proxy.js'

/** The error `run` rejects with. */
async function errorOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>, options: pg.ClientConfig = {}) {
  const client = new pg.Client({ connectionString: url, ...options })
  client.on('error', () => {})
  try {
    await client.connect()
    return await fn(client)
  } finally {
    await client.end().catch(() => {})
  }
}

describe.skipIf(testDbKind === 'pglite')('isDatabaseUnreachable on real node-postgres errors', () => {
  it('a refused connection (ECONNREFUSED)', async () => {
    const port = await freePort()
    const error = await errorOf(() =>
      withClient(`postgres://postgres@127.0.0.1:${port}/test`, async () => {}),
    )
    expect((error as { code?: string }).code).toBe('ECONNREFUSED')
    expect(isDatabaseUnreachable(error)).toBe(true)
  })

  it('a connection lost under a query ("Connection terminated unexpectedly" or ECONNRESET)', async () => {
    const proxy = await PgProxy.start()
    try {
      const error = await errorOf(() =>
        withClient(proxy.url(), async (c) => {
          const query = c.query('select pg_sleep(5)')
          await new Promise((resolve) => setTimeout(resolve, 200))
          await proxy.break()
          return query
        }),
      )
      expect(String(error)).toMatch(/Connection terminated unexpectedly|ECONNRESET/)
      expect(isDatabaseUnreachable(error)).toBe(true)
      // and the next connection is refused
      const refused = await errorOf(() => withClient(proxy.url(), async () => {}))
      expect(isDatabaseUnreachable(refused)).toBe(true)
    } finally {
      await proxy.close()
    }
  })

  it('a backend the administrator terminated (57P01 admin_shutdown, as under pg_ctl stop -m fast)', async () => {
    const error = await errorOf(() =>
      withClient(TEST_DATABASE_URL, (c) => c.query('select pg_terminate_backend(pg_backend_pid())')),
    )
    expect((error as { code?: string }).code).toBe('57P01')
    expect(isDatabaseUnreachable(error)).toBe(true)
  })

  it('a server that accepts but never answers (pg-pool connection timeout)', async () => {
    const silent = createServer((socket: Socket) => socket.on('error', () => {}))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const port = (silent.address() as { port: number }).port
    const pool = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
      connectionTimeoutMillis: 200,
    })
    pool.on('error', () => {})
    try {
      const error = await errorOf(() => pool.query('select 1'))
      expect(String(error)).toMatch(/timeout/)
      expect(isDatabaseUnreachable(error)).toBe(true)
    } finally {
      await pool.end()
      silent.close()
    }
  })

  it('not an outage: bad SQL, bad data, the guard shedding, a plain error', async () => {
    const syntax = await errorOf(() => withClient(TEST_DATABASE_URL, (c) => c.query('selec 1')))
    expect((syntax as { code?: string }).code).toBe('42601')
    const dataError = await errorOf(() =>
      withClient(TEST_DATABASE_URL, (c) =>
        c.query('select * from (values (1), (1)) v(x) where 1 / (x - 1) = 0'),
      ),
    )
    expect((dataError as { code?: string }).code).toBe('22012')
    for (const error of [
      syntax,
      dataError,
      new OverloadedError('db', 'queue_full', 1000),
      new Error('boom'),
      undefined,
      'ECONNREFUSED',
    ])
      expect(isDatabaseUnreachable(error)).toBe(false)
  })
})

describe('isDatabaseUnreachable on errors as data', () => {
  it('SQLSTATEs of a server starting up or shutting down, class 08, causes and AggregateErrors', () => {
    const coded = (code: string) => Object.assign(new Error(code), { code })
    for (const code of ['57P01', '57P02', '57P03', '53300', '08006', '08001', 'ECONNRESET', 'EPIPE'])
      expect(isDatabaseUnreachable(coded(code)), code).toBe(true)
    for (const code of ['23505', '40001', '57014', '42P01'])
      expect(isDatabaseUnreachable(coded(code)), code).toBe(false)
    expect(isDatabaseUnreachable(new Error('wrapped', { cause: coded('57P03') }))).toBe(true)
    expect(isDatabaseUnreachable(new AggregateError([coded('ECONNREFUSED')], 'connect'))).toBe(true)
    // Redis refusing is floodgate's StoreUnavailableError, not a database outage
    expect(isDatabaseUnreachable(new StoreUnavailableError('redis', { cause: coded('ECONNREFUSED') }))).toBe(
      false,
    )
  })
})
