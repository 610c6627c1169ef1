// prepack/postpack: the `floodgate-source` export condition (TypeScript sources, used inside this
// repository by tests, benches and the app) points at files the package does not ship, so the
// packed package.json goes without it. `strip` keeps the original in .package.json.dev and
// `restore` puts it back; a `strip` that finds a leftover backup restores it first.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'

const manifest = new URL('../package.json', import.meta.url)
const backup = new URL('../.package.json.dev', import.meta.url)
const CONDITION = 'floodgate-source'

const mode = process.argv[2]
if (mode === 'restore' || (mode === 'strip' && existsSync(backup))) {
  if (existsSync(backup)) renameSync(backup, manifest)
}
if (mode === 'strip') {
  const text = readFileSync(manifest, 'utf8')
  const pkg = JSON.parse(text)
  for (const target of Object.values(pkg.exports)) {
    if (target !== null && typeof target === 'object') delete target[CONDITION]
  }
  writeFileSync(backup, text)
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`)
} else if (mode !== 'restore') {
  console.error('usage: pack-manifest.mjs strip|restore')
  process.exit(2)
}
