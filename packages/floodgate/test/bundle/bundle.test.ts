import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { build, type Metafile } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_REDIS_URL } from '../support/redis.js'

const run = promisify(execFile)
const packageDir = fileURLToPath(new URL('../..', import.meta.url))
const examples = fileURLToPath(new URL('../../../../examples/', import.meta.url))

// The built package (dist/), as an app's bundler sees it: esbuild's default conditions, not floodgate-source.
describe('an esbuild bundle of an example', () => {
  let outDir: string
  beforeAll(async () => {
    await run('npm', ['run', 'build'], { cwd: packageDir })
    outDir = await mkdtemp(join(tmpdir(), 'floodgate-bundle-'))
  }, 120_000)
  afterAll(() => rm(outDir, { recursive: true, force: true }))

  async function bundle(example: string): Promise<{ file: string; metafile: Metafile }> {
    const file = join(outDir, `${example}.mjs`)
    const { metafile } = await build({
      entryPoints: [join(examples, example, 'main.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: file,
      metafile: true,
      logLevel: 'silent',
      // ioredis is CommonJS: give its require() calls of Node built-ins a require in ESM
      banner: {
        js: "import { createRequire as bannerCreateRequire } from 'node:module'; const require = bannerCreateRequire(import.meta.url);",
      },
    })
    return { file, metafile }
  }

  it('runs the lock example from one file in a directory with no node_modules', async () => {
    const { file } = await bundle('lock')
    const { stdout } = await run(process.execPath, [file], {
      cwd: outDir,
      env: { ...process.env, REDIS_URL: TEST_REDIS_URL },
      timeout: 30_000,
    })
    expect(stdout).toMatch(/lock: 10 jobs, fencing tokens 1,2,3,4,5,6,7,8,9,10, overlapped: false/)
  }, 60_000)

  it('takes from floodgate only the modules of the subpath it imports', async () => {
    const { metafile } = await bundle('rate-limit')
    const modules = Object.keys(metafile.inputs)
      .map((path) => /packages\/floodgate\/dist\/([^/]+)\//.exec(path)?.[1])
      .filter((area) => area !== undefined)
    expect(new Set(modules)).toEqual(
      new Set(['ratelimit', 'redis', 'errors', 'deadline', 'observability', 'validation', 'backoff']),
    )
  }, 60_000)
})
