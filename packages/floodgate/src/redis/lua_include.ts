import { readFileSync } from 'node:fs'
import { dirname, extname, resolve } from 'node:path'
import { LuaIncludeError } from '../errors/index.js'

/**
 * A line `--- @include "<path>"`: `<path>` is relative to the including file, `.lua` optional
 * (BullMQ's script-loader syntax, without its `<alias>` and `~` prefixes or globs).
 */
const INCLUDE_LINE = /^---[ \t]*@include[ \t]+(["'])(.+?)\1[ \t;]*$/

/** Reads one file's text; replaceable so the resolver can be tested on its own. */
export type ReadLuaFile = (path: string) => string

const readUtf8: ReadLuaFile = (path) => readFileSync(path, 'utf8')

/**
 * The text of the Lua file at `path` with every `--- @include "<path>"` line replaced by the
 * included file's text, recursively. A file included more than once in one script (directly or
 * through other includes) is emitted once, at its first include: includes define `local function`s.
 * Used by {@link LuaScript} when it reads a file and by the build (`scripts/embed-lua.mjs`).
 * @param path absolute path of the top-level script.
 * @throws {LuaIncludeError} `reason: 'missing'` when a file cannot be read, `'cycle'` when a file
 *   includes itself through its includes; `chain` lists the files from the top-level script down.
 */
export function resolveLuaIncludes(path: string, read: ReadLuaFile = readUtf8): string {
  return expand(resolve(path), [], new Set<string>(), read)
}

function expand(path: string, chain: readonly string[], emitted: Set<string>, read: ReadLuaFile): string {
  if (chain.includes(path)) throw new LuaIncludeError('cycle', path, [...chain, path])
  const here = [...chain, path]
  let text: string
  try {
    text = read(path)
  } catch (error) {
    throw new LuaIncludeError('missing', path, here, error)
  }
  emitted.add(path)
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const match = INCLUDE_LINE.exec(lines[i]!.trimEnd())
    if (!match) continue
    const target = resolve(dirname(path), withLuaExtension(match[2]!))
    if (here.includes(target)) throw new LuaIncludeError('cycle', target, [...here, target])
    lines[i] = emitted.has(target) ? '' : expand(target, here, emitted, read).replace(/\n$/, '')
  }
  return lines.join('\n')
}

function withLuaExtension(path: string): string {
  return extname(path) === '.lua' ? path : `${path}.lua`
}
