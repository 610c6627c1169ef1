/**
 * How the `waitForReplicas` write path (`ReplicatedWrites`) reads a node's error replies:
 * refused before running (safe to resend), a redirect's target, a command timeout, a lost connection.
 */

/** Why a command was refused before it ran: NOSCRIPT, MOVED / ASK, CLUSTERDOWN / TRYAGAIN. */
export type Refusal = 'noscript' | 'moved' | 'down'

/** Why Redis refused a command before running it (retrying it is safe), or undefined. */
export function refusedBeforeRun(error: Error): Refusal | undefined {
  const message = error.message
  if (message.startsWith('NOSCRIPT')) return 'noscript'
  if (message.startsWith('MOVED ') || message.startsWith('ASK ')) return 'moved'
  // the cluster refuses every command until a failed master's replica is promoted
  if (message.startsWith('CLUSTERDOWN') || message.startsWith('TRYAGAIN')) return 'down'
  return undefined
}

/** `host:port` of `MOVED <slot> <host:port>`; undefined for anything else (ASK, whose node needs ASKING). */
export function movedTarget(message: string): string | undefined {
  const match = /^MOVED \d+ (\S+:\d+)$/.exec(message)
  return match?.[1]
}

/** ioredis' own command timeout (the client's `commandTimeout`): the command may still run. */
export function isCommandTimeout(error: Error | null): boolean {
  return error?.message === 'Command timed out'
}

/** Anything but a Redis error reply: a refused, reset or closed connection, or a timeout. */
export function isConnectionError(error: Error): boolean {
  return !(error.name === 'ReplyError')
}
