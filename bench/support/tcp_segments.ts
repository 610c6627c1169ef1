import { execFileSync } from 'node:child_process'

/**
 * Data segments process `pid` has sent so far on its TCP connections to `127.0.0.1:<port>`
 * (the kernel's `data_segs_out` per socket, read with `ss -tinp`; Linux only).
 *
 * Used as the count of network round trips to Redis without a proxy: the clients set
 * TCP_NODELAY, so every write of a command (or of a pipeline, or an auto-pipelined batch) leaves
 * as one segment on loopback (MSS 65,483 bytes, far above a command's size), and each one waits
 * for its reply. Connections closed between two readings drop out of the sum (the service keeps
 * its connections open).
 */
export function dataSegmentsOut(pid: number, port: number): number {
  const out = execFileSync('ss', ['-tinpH', 'state', 'established', 'dst', `127.0.0.1:${port}`], {
    encoding: 'utf8',
  })
  // one socket = its line with `users:(("node",pid=…))`, then an indented line of TCP info
  let total = 0
  let ours = false
  for (const line of out.split('\n')) {
    if (/^\s/.test(line)) {
      if (!ours) continue
      const segments = /\bdata_segs_out:(\d+)/.exec(line)
      if (segments) total += Number(segments[1])
    } else {
      ours = line.includes(`pid=${pid},`)
    }
  }
  return total
}
