import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, registerUser, secondInstance, type TestApp } from './support/app.js'

// Two databases, one JWT secret (as with one DATA_DIR/jwt-secret): user ids collide (both start at 1).
let a: TestApp
let b: TestApp
let a2: FastifyInstance
beforeAll(async () => {
  a = await createTestApp('aud_a')
  b = await createTestApp('aud_b')
  // a second instance on database A
  a2 = await secondInstance(a)
})
afterAll(async () => {
  await a?.close()
  await b?.close()
})

const payload = { title: 't', coverUrl: 'https://a.example/c.jpg', playUrl: 'https://a.example/v.mp4' }

describe('tokens are bound to their database (installation id as aud)', () => {
  it("refuses a token from another database's user with the same id, accepts it on another instance of the same database", async () => {
    const alice = await registerUser(a.app, 'alice_aud')
    const bob = await registerUser(b.app, 'bob_aud')
    expect(alice.userId).toBe(bob.userId) // the collision the audience protects against

    const onB = await b.app.inject({ method: 'POST', url: '/videos', headers: alice.auth, payload })
    expect(onB.statusCode).toBe(401)
    expect(onB.json<{ code: string }>().code).toBe('UNAUTHORIZED')
    expect(b.app.tokens.verify(alice.token)).toBeUndefined()

    const onA2 = await a2.inject({ method: 'POST', url: '/videos', headers: alice.auth, payload })
    expect(onA2.statusCode).toBe(201)
    expect(onA2.json<{ authorId: string }>().authorId).toBe(alice.userId)
    const onA = await a.app.inject({ method: 'POST', url: '/videos', headers: bob.auth, payload })
    expect(onA.statusCode).toBe(401)
  })
})
