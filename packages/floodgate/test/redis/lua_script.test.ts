import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { KeySpace, LuaScript, StoreUnavailableError } from '../../src/index.js'
import {
  deadRedisClient,
  deleteByPrefix,
  masterNodes,
  testRedisClient,
  uniquePrefix,
} from '../support/redis.js'

const redis = testRedisClient()
const keys = new KeySpace(uniquePrefix('lua'))
const dir = mkdtempSync(join(tmpdir(), 'fg-lua-'))
writeFileSync(
  join(dir, 'echo-1.lua'),
  "redis.call('SET', KEYS[1], ARGV[1])\nreturn redis.call('GET', KEYS[1])\n",
)
const script = new LuaScript(pathToFileURL(join(dir, 'echo-1.lua')))

afterAll(async () => {
  await deleteByPrefix(redis, keys.prefix)
  redis.disconnect()
})

describe('LuaScript', () => {
  it('reads the key count from the file name', () => {
    expect(script.name).toBe('echo')
    expect(script.numberOfKeys).toBe(1)
  })

  it('runs by EVALSHA and reloads once after SCRIPT FLUSH', async () => {
    const key = keys.tagged('lua', 'a')
    expect(await script.run(redis, [key], ['one'])).toBe('one')
    // on a cluster the flush must reach every master (the script was loaded on the key's node)
    for (const node of masterNodes(redis)) await node.script('FLUSH')
    expect(await script.run(redis, [key], ['two'])).toBe('two')
    const exists = await Promise.all(masterNodes(redis).map((node) => node.script('EXISTS', script.sha1)))
    expect(exists).toContainEqual([1])
  })

  it('wraps a Redis error in StoreUnavailableError with a cause', async () => {
    const dead = deadRedisClient()
    const error = await script.run(dead, [keys.tagged('lua', 'b')], ['x']).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(StoreUnavailableError)
    expect((error as StoreUnavailableError).cause).toBeInstanceOf(Error)
  })

  it('escapes braces so a tag cannot split the slot', () => {
    expect(keys.tagged('c', 'a}b{c')).toBe(`${keys.prefix}:c:{a%7Db%7Bc}`)
  })
})
