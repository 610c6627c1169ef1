import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { LuaIncludeError, LuaScript } from '../../src/index.js'
import { resolveLuaIncludes } from '../../src/redis/lua_include.js'

/** Writes `files` (path relative to a fresh directory → text) and answers the directory. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'fg-lua-include-'))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

describe('resolveLuaIncludes', () => {
  it('replaces an include line by the file, relative to the including file, .lua optional', () => {
    const dir = tree({
      'lock/lua/take-1.lua': '--[[ header ]]\n--- @include "../../shared/clock"\nreturn now()\n',
      'shared/clock.lua': 'local function now()\n  return 1\nend\n',
    })
    expect(resolveLuaIncludes(join(dir, 'lock/lua/take-1.lua'))).toBe(
      '--[[ header ]]\nlocal function now()\n  return 1\nend\nreturn now()\n',
    )
  })

  it('resolves nested includes and emits a file included twice only once', () => {
    const dir = tree({
      'main-1.lua': '--- @include \'a.lua\'\n--- @include "b"\nreturn a() + b()\n',
      'a.lua': '--- @include "c"\nlocal function a() return c() end\n',
      'b.lua': '--- @include "c"\nlocal function b() return c() end\n',
      'c.lua': 'local function c() return 1 end\n',
    })
    const source = resolveLuaIncludes(join(dir, 'main-1.lua'))
    expect(source.match(/local function c\(\)/g)).toHaveLength(1)
    expect(source.indexOf('function c')).toBeLessThan(source.indexOf('function a'))
    expect(source).not.toContain('@include')
  })

  it('throws LuaIncludeError (missing) with the include chain when a file is not there', () => {
    const dir = tree({ 'main-1.lua': '--- @include "a"\n', 'a.lua': '--- @include "gone"\n' })
    const error = catchError(() => resolveLuaIncludes(join(dir, 'main-1.lua')))
    expect(error).toBeInstanceOf(LuaIncludeError)
    expect(error).toMatchObject({ code: 'FLOODGATE_LUA_INCLUDE', reason: 'missing' })
    expect((error as LuaIncludeError).chain.map((p) => p.slice(dir.length + 1))).toEqual([
      'main-1.lua',
      'a.lua',
      'gone.lua',
    ])
  })

  it('throws LuaIncludeError (cycle) when a file includes itself through another', () => {
    const dir = tree({
      'main-1.lua': '--- @include "a"\n',
      'a.lua': '--- @include "b"\n',
      'b.lua': '--- @include "a"\n',
    })
    const error = catchError(() => resolveLuaIncludes(join(dir, 'main-1.lua')))
    expect(error).toMatchObject({ code: 'FLOODGATE_LUA_INCLUDE', reason: 'cycle' })
    expect((error as LuaIncludeError).chain.map((p) => p.slice(dir.length + 1))).toEqual([
      'main-1.lua',
      'a.lua',
      'b.lua',
      'a.lua',
    ])
  })

  it('throws LuaIncludeError (cycle) on a file that includes itself', () => {
    const dir = tree({ 'main-1.lua': '--- @include "main-1"\n' })
    expect(() => resolveLuaIncludes(join(dir, 'main-1.lua'))).toThrow(LuaIncludeError)
  })

  it('leaves a line that only mentions @include in a comment or string alone', () => {
    const dir = tree({ 'main-1.lua': '-- see @include "x"\nreturn \'--- @include "x"\'\n' })
    expect(resolveLuaIncludes(join(dir, 'main-1.lua'))).toBe(
      '-- see @include "x"\nreturn \'--- @include "x"\'\n',
    )
  })

  it('is what LuaScript loads from a file URL (the sha1 covers the included text)', () => {
    const dir = tree({
      'echo-1.lua': '--- @include "get"\nreturn get(KEYS[1])\n',
      'get.lua': "local function get(key) return redis.call('GET', key) end\n",
    })
    const script = new LuaScript(pathToFileURL(join(dir, 'echo-1.lua')))
    expect(script.source).toBe(
      "local function get(key) return redis.call('GET', key) end\nreturn get(KEYS[1])\n",
    )
    expect(() => new LuaScript(pathToFileURL(join(dir, 'missing-1.lua')))).toThrow(LuaIncludeError)
  })
})

describe("the library's scripts", () => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url))
  const scripts = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
    (path) => path.endsWith('.lua') && !path.includes('includes/'),
  )

  it.each(scripts)('%s resolves with no include line left', (path) => {
    expect(resolveLuaIncludes(join(src, path))).not.toMatch(/^---[ \t]*@include/m)
  })
})

function catchError(fn: () => unknown): unknown {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}
