import { freePort } from '@floodgate/test-support'
import { describe, expect, it } from 'vitest'

// The three deployments ask for their instances' ports at once, before any instance binds one.
describe('freePort', () => {
  it('never hands this process the same port twice', async () => {
    // one after another: the OS hands out a port it was just given back (1,745-1,775 distinct before)
    const ports: number[] = []
    for (let i = 0; i < 2_000; i++) ports.push(await freePort())
    expect(new Set(ports).size).toBe(ports.length)
    for (const port of ports) expect(port).toBeGreaterThan(0)
  })
})
