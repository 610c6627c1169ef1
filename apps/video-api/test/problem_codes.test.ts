import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../src/config/index.js'
import { problemStatus } from '../src/http/api_error.js'

describe('the HTTP problem code catalogue', () => {
  it('is the list docs/api.md gives, no more, no less', () => {
    const api = readFileSync(join(repoRoot, 'docs', 'api.md'), 'utf8')
    const list = /stable `code` \(([^)]*)\)/.exec(api)?.[1]
    expect(list, 'docs/api.md lacks the "stable `code` (…)" list').toBeDefined()
    const documented = [...(list ?? '').matchAll(/`([A-Z_]+)`/g)].map((m) => m[1])
    expect(new Set(documented)).toEqual(new Set(Object.keys(problemStatus)))
    expect(documented).toHaveLength(Object.keys(problemStatus).length)
  })
})
