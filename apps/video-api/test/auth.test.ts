import { createSigner } from 'fast-jwt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword, verifyPassword } from '../src/auth/password.js'
import { createTestApp, registerUser, TEST_JWT_SECRET, type TestApp } from './support/app.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp('auth')
})
afterAll(() => t.close())

describe('password hashing', () => {
  it('verifies the right password only, with a fresh salt each time', async () => {
    const a = await hashPassword('s3cret-pass')
    const b = await hashPassword('s3cret-pass')
    expect(a).not.toBe(b)
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/)
    expect(await verifyPassword('s3cret-pass', a)).toBe(true)
    expect(await verifyPassword('s3cret-pasS', a)).toBe(false)
    expect(await verifyPassword('s3cret-pass', 'garbage')).toBe(false)
  })
})

describe('register and login', () => {
  it('registers, logs in, and the token authenticates a write', async () => {
    const { userId } = await registerUser(t.app, 'alice_auth', 'correct-horse')
    const login = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { username: 'alice_auth', password: 'correct-horse' },
    })
    expect(login.statusCode).toBe(200)
    const body = login.json<{ token: string; userId: string; expiresInS: number }>()
    expect(body.userId).toBe(userId)
    expect(body.expiresInS).toBe(3600)
    const create = await t.app.inject({
      method: 'POST',
      url: '/videos',
      headers: { authorization: `Bearer ${body.token}` },
      payload: { title: 't', coverUrl: 'https://a.example/c.jpg', playUrl: 'https://a.example/v.mp4' },
    })
    expect(create.statusCode).toBe(201)
    expect(create.json<{ authorId: string }>().authorId).toBe(userId)
  })

  it('refuses a taken username with 409 CONFLICT', async () => {
    await registerUser(t.app, 'bob_auth')
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/register',
      payload: { username: 'bob_auth', password: 'another-pass' },
    })
    expect(res.statusCode).toBe(409)
    expect(res.json<{ code: string }>().code).toBe('CONFLICT')
  })

  it('answers the same for an unknown user and a wrong password (no enumeration)', async () => {
    await registerUser(t.app, 'carol_auth', 'right-password')
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { username: 'carol_auth', password: 'wrong-password' },
    })
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { username: 'nobody_here', password: 'wrong-password' },
    })
    expect(wrong.statusCode).toBe(401)
    expect(unknown.statusCode).toBe(401)
    const { instance: _a, ...w } = wrong.json<Record<string, unknown>>()
    const { instance: _b, ...u } = unknown.json<Record<string, unknown>>()
    expect(w).toEqual(u)
  })

  it('refuses expired tokens and tokens signed with another key', async () => {
    const expired = createSigner({
      key: TEST_JWT_SECRET,
      algorithm: 'HS256',
      iss: 'video-api',
      clockTimestamp: Date.now() - 7200_000,
      expiresIn: 1000,
    })({ sub: '1' })
    const otherKey = createSigner({ key: 'x'.repeat(40), algorithm: 'HS256', iss: 'video-api' })({ sub: '1' })
    for (const token of [expired, otherKey]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/feed/recommend',
        headers: { authorization: `Bearer ${token}` },
      })
      expect(res.statusCode).toBe(401)
      expect(res.json<{ code: string }>().code).toBe('UNAUTHORIZED')
    }
  })
})
