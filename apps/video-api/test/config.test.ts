import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, redisClusterSeeds, repoRoot } from '../src/config/index.js'

const load = (env: Record<string, string>, argv: string[] = []) => loadConfig({ env, argv })

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
  throw new Error('expected a ConfigError')
}

describe('loadConfig', () => {
  it('has documented defaults; data folder is <repo>/data', () => {
    const c = load({})
    expect(c.port).toBe(3000)
    expect(c.host).toBe('127.0.0.1')
    expect(c.databaseUrl).toBeUndefined()
    expect(c.redisPrefix).toBe('va')
    expect(c.jwtTtlS).toBe(3600)
    expect(c.bodyLimitBytes).toBe(65536)
    expect(c.seedOnEmpty).toBe(true)
    expect(c.dataDir).toBe(join(repoRoot, 'data'))
  })

  it('resolves a relative DATA_DIR against the directory npm was run from (INIT_CWD)', () => {
    expect(load({ DATA_DIR: 'mydata', INIT_CWD: '/srv/app' }).dataDir).toBe('/srv/app/mydata')
    expect(load({ DATA_DIR: '/abs/data' }).dataDir).toBe('/abs/data')
  })

  it.each([
    [{ PORT: 'abc' }, 'PORT: must be an integer 0-65535, got "abc"'],
    [{ PORT: '70000' }, 'PORT: must be an integer 0-65535, got "70000"'],
    [{ JWT_TTL_S: '1.5' }, 'JWT_TTL_S: must be an integer'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL: must use postgres: or postgresql:'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL: must be a URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL: must use redis: or rediss:'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL: must be one of'],
    [
      { REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_URL: 'redis://127.0.0.1:6379' },
      'REDIS_CLUSTER_NODES: cannot be set together with REDIS_URL',
    ],
    [{ REDIS_CLUSTER_NODES: '127.0.0.1' }, 'REDIS_CLUSTER_NODES: must be comma-separated host:port seeds'],
    [
      { REDIS_CLUSTER_NODES: 'a:7000,b:99999' },
      'REDIS_CLUSTER_NODES: must be comma-separated host:port seeds',
    ],
    [{ REDIS_CLUSTER_NODES: ' , ' }, 'REDIS_CLUSTER_NODES: must be comma-separated host:port seeds'],
    [{ SEED_ON_EMPTY: 'yes' }, 'SEED_ON_EMPTY: must be true or false'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET: must be at least 32 characters'],
    [{ DB_SCHEMA: 'Bad-Schema' }, 'DB_SCHEMA: must match'],
    [{ BODY_LIMIT_BYTES: '10' }, 'BODY_LIMIT_BYTES: must be an integer 1024-'],
  ])('rejects %o naming the field', (env, message) => {
    const error = errorOf(() => load(env))
    expect(error.code).toBe('VIDEO_API_CONFIG_INVALID')
    expect(error.message).toContain(message)
  })

  it('reads REDIS_CLUSTER_NODES as a list of seeds (cluster mode); unset = single node', () => {
    const config = load({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b.local:7001' })
    expect(redisClusterSeeds(config)).toEqual(['10.0.0.1:7000', 'redis-b.local:7001'])
    expect(config.redisUrl).toBeUndefined()
    expect(redisClusterSeeds(load({}))).toBeUndefined()
  })

  it('reads a TOML file (CONFIG_FILE or --config); env wins over the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'va-config-'))
    const file = join(dir, 'va.toml')
    writeFileSync(file, 'port = 4100\nhost = "0.0.0.0"\njwt_ttl_s = 60\n')
    expect(load({ CONFIG_FILE: file }).port).toBe(4100)
    expect(load({}, ['--config', file]).jwtTtlS).toBe(60)
    expect(load({ CONFIG_FILE: file, PORT: '4200' }).port).toBe(4200)
  })

  it('names a bad TOML value and an unknown TOML key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'va-config-'))
    const bad = join(dir, 'bad.toml')
    writeFileSync(bad, 'port = "x"\n')
    expect(errorOf(() => load({ CONFIG_FILE: bad })).message).toContain('PORT: must be an integer')
    const unknown = join(dir, 'unknown.toml')
    writeFileSync(unknown, 'prot = 1\n')
    expect(errorOf(() => load({ CONFIG_FILE: unknown })).message).toContain('prot: unknown option')
    const broken = join(dir, 'broken.toml')
    writeFileSync(broken, 'port = = 1\n')
    expect(errorOf(() => load({ CONFIG_FILE: broken })).field).toBe('CONFIG_FILE')
  })
})
