import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { createTokenService, type TokenService } from '../auth/tokens.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Issues and verifies bearer tokens. */
    tokens: TokenService
  }
}

export interface TokensPluginOptions {
  /** HS256 secret. */
  secret: string
  /** Token lifetime (s). */
  ttlS: number
}

/** Bearer tokens carrying this database's installation id (aud): a token from another database is refused. */
async function tokensPlugin(app: FastifyInstance, options: TokensPluginOptions): Promise<void> {
  app.decorate('tokens', createTokenService(options.secret, options.ttlS, app.installationId))
}

export default fp(tokensPlugin, { name: 'tokens', fastify: '5.x', dependencies: ['database'] })
