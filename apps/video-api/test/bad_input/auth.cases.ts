import type { Case } from './refused.js'

/** POST /auth/register and /auth/login. */
export const authCases: Case[] = [
  {
    name: 'register: short password',
    request: () => ({
      method: 'POST',
      url: '/auth/register',
      payload: { username: 'newuser', password: 'short' },
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/password',
  },
  {
    name: 'register: username with spaces',
    request: () => ({
      method: 'POST',
      url: '/auth/register',
      payload: { username: 'a b c', password: 'long-enough' },
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/username',
  },
  {
    name: 'register: taken username',
    request: () => ({
      method: 'POST',
      url: '/auth/register',
      payload: { username: 'alice_b', password: 'long-enough' },
    }),
    status: 409,
    code: 'CONFLICT',
  },
  {
    name: 'login: wrong password',
    request: () => ({
      method: 'POST',
      url: '/auth/login',
      payload: { username: 'alice_b', password: 'not-her-password' },
    }),
    status: 401,
    code: 'UNAUTHORIZED',
  },
]
