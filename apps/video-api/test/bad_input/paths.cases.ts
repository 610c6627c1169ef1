import { type Case, ctx } from './refused.js'

/** Ids in the path of /videos/:id (GET, DELETE) and a path no route has. */
export const pathCases: Case[] = [
  {
    name: 'non-numeric id',
    request: () => ({ method: 'GET', url: '/videos/abc' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'zero id',
    request: () => ({ method: 'GET', url: '/videos/0' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'negative id',
    request: () => ({ method: 'GET', url: '/videos/-1' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'fractional id',
    request: () => ({ method: 'GET', url: '/videos/1.5' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'id above 2^63-1',
    request: () => ({ method: 'GET', url: '/videos/9223372036854775808' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: '9223372036854775807',
  },
  {
    name: '20-digit id',
    request: () => ({ method: 'GET', url: '/videos/12345678901234567890' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'malformed %-escape in the path',
    request: () => ({ method: 'GET', url: '/videos/%zz' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'not a valid url',
  },
  {
    name: 'path parameter over 100 characters',
    request: () => ({ method: 'GET', url: `/videos/${'1'.repeat(200)}` }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id must NOT have more than 19 characters',
  },
  {
    name: 'id with leading zero',
    request: () => ({ method: 'GET', url: '/videos/01' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'id in hex',
    request: () => ({ method: 'GET', url: '/videos/0x10' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'id in exponent form',
    request: () => ({ method: 'GET', url: '/videos/1e3' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'id in Arabic-Indic digits',
    request: () => ({ method: 'GET', url: `/videos/${encodeURIComponent('١٢')}` }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'bad id on DELETE',
    request: () => ({ method: 'DELETE', url: '/videos/0', headers: ctx.alice }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  { name: 'unknown route', request: () => ({ method: 'GET', url: '/nope' }), status: 404, code: 'NOT_FOUND' },
]
