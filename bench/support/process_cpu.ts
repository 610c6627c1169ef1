import { readFileSync } from 'node:fs'

/** Linux clock ticks per second of /proc/<pid>/stat (`getconf CLK_TCK`, 100 on Linux x86 and arm). */
const TICKS_PER_S = 100

/**
 * CPU time (ms) process `pid` has used so far, user + system, all threads: fields 14 and 15 of
 * /proc/<pid>/stat (Linux only; resolution 10 ms, so read it around runs of seconds).
 * @throws when the process is gone.
 */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // the command (field 2) is in parentheses and may hold spaces: count fields after its ')'
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S
}
