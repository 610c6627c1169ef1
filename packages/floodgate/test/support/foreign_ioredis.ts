import { createRequire } from 'node:module'

type Ioredis = typeof import('ioredis')

/**
 * A second copy of ioredis, as an application whose own copy of the peer dependency is not the one
 * floodgate imports: the same files loaded afresh, so its `Redis` and `Cluster` are other classes
 * (`instanceof` this copy's is false). The module cache is put back as it was.
 */
export function foreignIoredis(): Ioredis {
  const require = createRequire(import.meta.url)
  const ours = Object.entries(require.cache).filter(([path]) => path.includes('/node_modules/ioredis/'))
  for (const [path] of ours) delete require.cache[path]
  try {
    return require('ioredis') as Ioredis
  } finally {
    for (const [path] of Object.entries(require.cache))
      if (path.includes('/node_modules/ioredis/')) delete require.cache[path]
    for (const [path, module] of ours) require.cache[path] = module
  }
}
