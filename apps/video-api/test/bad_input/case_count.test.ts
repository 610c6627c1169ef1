import { describe, expect, it } from 'vitest'
import { authCases } from './auth.cases.js'
import { listCases } from './lists.cases.js'
import { pathCases } from './paths.cases.js'
import { tokenCases } from './tokens.cases.js'
import { videoWriteCases } from './video_writes.cases.js'

// the route groups' tables together, as when they were one (each file runs its own)
describe('bad input is refused with a 4xx problem and no write', () => {
  it('has at least 30 cases', () => {
    const cases = [...pathCases, ...tokenCases, ...videoWriteCases, ...listCases, ...authCases]
    expect(cases.length).toBeGreaterThanOrEqual(30)
  })
})
