import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  name: string
  version: string
}

/**
 * Name and version of this service, from apps/video-api/package.json (read once; this file sits one
 * folder below it both in src/ and in the compiled dist/). They go into every log line, the
 * `video_api_build_info` metric and the OpenAPI document.
 */
export const SERVICE = { name: manifest.name, version: manifest.version } as const

/** pino `base` fields of every log line: pino's own (pid, hostname) plus the service name and version. */
export function logBase(): Record<string, unknown> {
  return { service: SERVICE.name, version: SERVICE.version, pid: process.pid, hostname: hostname() }
}
