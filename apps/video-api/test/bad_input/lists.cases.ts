import type { Case } from './refused.js'

/** Query strings of GET /users/:id/videos (limit, cursor) and GET /feed/recommend. */
export const listCases: Case[] = [
  {
    name: 'list: non-numeric user id',
    request: () => ({ method: 'GET', url: '/users/abc/videos' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'list: limit 0',
    request: () => ({ method: 'GET', url: '/users/1/videos?limit=0' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'querystring/limit',
  },
  {
    name: 'list: limit 101',
    request: () => ({ method: 'GET', url: '/users/1/videos?limit=101' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'querystring/limit',
  },
  {
    name: 'list: limit abc',
    request: () => ({ method: 'GET', url: '/users/1/videos?limit=abc' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'list: forged cursor',
    request: () => ({
      method: 'GET',
      url: `/users/1/videos?cursor=${Buffer.from('yesterday|1').toString('base64url')}`,
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'cursor',
  },
  ...(
    [
      ['February 31st', '2024-02-31T00:00:00.000000Z|5'],
      ['year 0000', '0000-01-01T00:00:00.000000Z|5'],
      ['offset +19:00', '2024-01-01T00:00:00+19:00|5'],
      ['SQL in the id', "2024-01-01T00:00:00.000000Z|1' OR 1=1 --"],
      ['id above 2^63-1', '2024-01-01T00:00:00.000000Z|9223372036854775808'],
    ] as const
  ).map(
    ([what, raw]): Case => ({
      name: `list: crafted cursor (${what})`,
      request: () => ({
        method: 'GET',
        url: `/users/1/videos?cursor=${Buffer.from(raw).toString('base64url')}`,
      }),
      status: 400,
      code: 'VALIDATION_FAILED',
      detail: 'cursor',
    }),
  ),
  {
    name: 'list: unknown query parameter',
    request: () => ({ method: 'GET', url: '/users/1/videos?sort=asc' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'feed: unknown query parameter',
    request: () => ({ method: 'GET', url: '/feed/recommend?page=2' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'rankings: unknown window names the allowed ones',
    request: () => ({ method: 'GET', url: '/rankings/hot?window=7d' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'querystring/window must be one of: "all", "1h", "24h"',
  },
]
