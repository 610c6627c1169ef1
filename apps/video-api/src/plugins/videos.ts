import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { installVideoCache, type VideoCache } from '../cache/install.js'
import type { VideoCacheSettings } from '../cache/settings.js'
import { GuardedVideoReader } from '../videos/guarded_reader.js'
import { SqlVideoReader, type VideoReader } from '../videos/reader.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Video reads: cached when the cache is on, behind the database guard either way. */
    videos: VideoReader
    /** The read cache and its Bloom filter; `null` when the cache is off. */
    videoCache: VideoCache | null
  }
}

export interface VideosPluginOptions {
  /** Wraps the SQL reader (behind the database guard). @default identity */
  wrapReader?: (reader: VideoReader) => VideoReader
  /** Read cache settings; `undefined`/`false` = off. */
  cache?: boolean | VideoCacheSettings
}

/** The video read path: SQL reader → database guard → optional wrapper → optional cache. */
async function videosPlugin(app: FastifyInstance, options: VideosPluginOptions): Promise<void> {
  const guarded = new GuardedVideoReader(new SqlVideoReader(app.db), app.dbGuard)
  const reader: VideoReader = options.wrapReader ? options.wrapReader(guarded) : guarded
  if (!options.cache) {
    app.decorate('videoCache', null)
    app.decorate('videos', reader)
    return
  }
  const cache = installVideoCache(
    {
      db: app.db,
      redis: app.redis,
      prefix: app.keys.prefix,
      registry: app.metrics,
      log: app.log,
      reader,
      writer: app.videoWriter,
      clientTracking: app.clientTracking,
    },
    options.cache === true ? {} : options.cache,
  )
  app.decorate('videoCache', cache)
  app.decorate('videos', cache.reader)
  app.addHook('onClose', async () => cache.close())
}

export default fp(videosPlugin, {
  name: 'videos',
  fastify: '5.x',
  dependencies: ['database', 'redis', 'repositories', 'metrics'],
})
