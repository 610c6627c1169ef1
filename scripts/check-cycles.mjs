#!/usr/bin/env node
// Fails when a source folder has an import cycle (type-only imports count: they couple the files
// as much for a reader). Relative specifiers only; `.js` resolves to the `.ts` file beside it.
// Usage: node scripts/check-cycles.mjs [folder…] (default: every workspace's src).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const folders =
  process.argv.slice(2).length > 0
    ? process.argv.slice(2)
    : ['packages/floodgate/src', 'apps/video-api/src', 'bench']

function* tsFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* tsFiles(path)
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield path
  }
}

const importPattern =
  /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g

function edges(file) {
  const out = []
  for (const match of readFileSync(file, 'utf8').matchAll(importPattern)) {
    const spec = match[1] ?? match[2]
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'))
    const candidates = [target, `${target}.ts`, join(target, 'index.ts')]
    const hit = candidates.find((c) => c.endsWith('.ts') && existsSync(c))
    if (hit) out.push(hit)
  }
  return out
}

/** Tarjan's strongly connected components; a component of more than one file is a cycle. */
function cycles(graph) {
  let index = 0
  const stack = []
  const info = new Map()
  const found = []
  const visit = (v) => {
    info.set(v, { index, low: index, onStack: true })
    index++
    stack.push(v)
    for (const w of graph.get(v) ?? []) {
      if (!info.has(w)) {
        visit(w)
        info.get(v).low = Math.min(info.get(v).low, info.get(w).low)
      } else if (info.get(w).onStack) info.get(v).low = Math.min(info.get(v).low, info.get(w).index)
    }
    if (info.get(v).low === info.get(v).index) {
      const component = []
      let w
      do {
        w = stack.pop()
        info.get(w).onStack = false
        component.push(w)
      } while (w !== v)
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component)
    }
  }
  for (const v of graph.keys()) if (!info.has(v)) visit(v)
  return found
}

const graph = new Map()
for (const folder of folders) for (const file of tsFiles(resolve(root, folder))) graph.set(file, edges(file))
const found = cycles(graph)
for (const component of found) {
  console.error(`import cycle: ${component.map((f) => relative(root, f)).join(' ↔ ')}`)
}
if (found.length > 0) process.exit(1)
console.log(`no import cycles in ${folders.join(', ')} (${graph.size} files)`)
