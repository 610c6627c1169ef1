import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CONFIG_TABLE_END, CONFIG_TABLE_START, configTableMarkdown } from '../src/config/docs.js'
import { repoRoot } from '../src/config/index.js'

describe('README configuration table', () => {
  it('lists every option with its default, exactly as the config module defines them', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
    const start = readme.indexOf(CONFIG_TABLE_START)
    const end = readme.indexOf(CONFIG_TABLE_END)
    expect(start, 'README.md lacks the config table markers').toBeGreaterThan(0)
    const block = readme.slice(start + CONFIG_TABLE_START.length, end).trim()
    // When this fails: `npm run config:docs -w video-api -- --write`
    expect(block).toBe(configTableMarkdown())
  })
})
