// Prints the configuration table, or with --write replaces it in README.md between its markers.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONFIG_TABLE_END, CONFIG_TABLE_START, configTableMarkdown } from '../config/docs.js'
import { repoRoot } from '../config/index.js'

const table = configTableMarkdown()
if (!process.argv.includes('--write')) {
  process.stdout.write(`${table}\n`)
} else {
  const path = join(repoRoot, 'README.md')
  const readme = readFileSync(path, 'utf8')
  const start = readme.indexOf(CONFIG_TABLE_START)
  const end = readme.indexOf(CONFIG_TABLE_END)
  if (start < 0 || end < start)
    throw new Error(`README.md has no ${CONFIG_TABLE_START} … ${CONFIG_TABLE_END} block`)
  writeFileSync(path, `${readme.slice(0, start + CONFIG_TABLE_START.length)}\n${table}\n${readme.slice(end)}`)
  process.stdout.write(`README.md: configuration table rewritten (${table.split('\n').length - 2} options)\n`)
}
