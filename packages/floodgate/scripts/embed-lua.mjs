// Build step after tsc: replaces every `new URL('./<name>-<keys>.lua', import.meta.url)` in dist
// with `{ file, source }` (the file's text, `--- @include`s resolved by the same resolver the
// source path uses), so built and bundled code reads no .lua file.
// Fails the build on a .lua URL it cannot embed, e.g. one built from a template or variable.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { resolveLuaIncludes } from '../dist/redis/lua_include.js'

const literal = /new URL\((['"])(\.{1,2}\/[^'"]+\.lua)\1, import\.meta\.url\)/g
const anyLuaUrl = /new URL\([^)]*\.lua[^)]*import\.meta\.url\)/

let embedded = 0
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path)
    else if (name.endsWith('.js')) embed(path)
  }
}

function embed(jsPath) {
  const code = readFileSync(jsPath, 'utf8')
  const sourceDir = dirname(jsPath).replace(/^dist/, 'src')
  const out = code.replace(literal, (_, _quote, rel) => {
    const luaPath = join(sourceDir, rel)
    embedded++
    const file = JSON.stringify(basename(luaPath))
    return `{ file: ${file}, source: ${JSON.stringify(resolveLuaIncludes(luaPath))} }`
  })
  if (anyLuaUrl.test(out)) {
    throw new Error(`${relative('.', jsPath)}: a .lua URL that is not a string literal cannot be embedded`)
  }
  if (out !== code) writeFileSync(jsPath, out)
}

walk('dist')
console.log(`embedded ${embedded} Lua scripts`)
