// Copies every .lua script next to its compiled module, since scripts are read at runtime
// relative to import.meta.url.
import { cpSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path)
    else if (name.endsWith('.lua')) cpSync(path, path.replace(/^src/, 'dist'))
  }
}
walk('src')
