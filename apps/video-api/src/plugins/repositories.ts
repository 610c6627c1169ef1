import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { UserRepository } from '../users/repository.js'
import { VideoWriter } from '../videos/writer.js'

declare module 'fastify' {
  interface FastifyInstance {
    users: UserRepository
    /** Video writes; the cache and Bloom filter hook into its `onVideoChanged`. */
    videoWriter: VideoWriter
  }
}

/** The SQL repositories: `users`, `videoWriter` (reads are the videos plugin's). */
async function repositoriesPlugin(app: FastifyInstance): Promise<void> {
  app.decorate('users', new UserRepository(app.db))
  app.decorate(
    'videoWriter',
    new VideoWriter(app.db, (error) => app.log.error({ err: error }, 'onVideoChanged hook failed')),
  )
}

export default fp(repositoriesPlugin, { name: 'repositories', fastify: '5.x', dependencies: ['database'] })
