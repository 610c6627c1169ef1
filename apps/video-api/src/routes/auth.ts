import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { dummyHash, hashPassword, verifyPassword } from '../auth/password.js'
import { ApiError } from '../http/api_error.js'
import { errorResponses } from '../http/schemas.js'

const Credentials = Type.Object(
  {
    username: Type.String({ minLength: 3, maxLength: 32, pattern: '^[A-Za-z0-9_.-]+$' }),
    password: Type.String({ minLength: 8, maxLength: 256 }),
  },
  { additionalProperties: false },
)

const TokenReply = Type.Object({
  token: Type.String(),
  tokenType: Type.Literal('Bearer'),
  expiresInS: Type.Integer({ description: 'token lifetime (s)' }),
  userId: Type.String(),
})

/** `POST /auth/register` and `POST /auth/login`: both answer a bearer token. */
export function authRoutes(app: FastifyInstance): void {
  const tokenFor = (userId: string) => ({
    token: app.tokens.issue(userId),
    tokenType: 'Bearer' as const,
    expiresInS: app.tokens.ttlS,
    userId,
  })

  app.post<{ Body: { username: string; password: string } }>(
    '/auth/register',
    { schema: { body: Credentials, response: { 201: TokenReply, ...errorResponses } } },
    async (request, reply) => {
      const { username, password } = request.body
      const created = await app.users.create(username, await hashPassword(password))
      if (!created) throw new ApiError('CONFLICT', 'username is taken')
      return reply.code(201).send(tokenFor(created.id))
    },
  )

  app.post<{ Body: { username: string; password: string } }>(
    '/auth/login',
    { schema: { body: Credentials, response: { 200: TokenReply, ...errorResponses } } },
    async (request) => {
      const { username, password } = request.body
      const user = await app.users.findByUsername(username)
      // Same work whether or not the user exists; same answer for "no user" and "wrong password".
      const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash()))
      if (!user || !ok) throw new ApiError('UNAUTHORIZED', 'invalid username or password')
      return tokenFor(user.id)
    },
  )
}
