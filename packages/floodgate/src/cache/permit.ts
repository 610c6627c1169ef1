/**
 * A load waited on a call's permit ({@link CallOptions.permit}) and the permit was refused: the
 * calls of the key that had joined that load in this process read again on their own terms, the
 * call whose permit it was rejects with `reason`. Internal: never reaches a caller.
 */
export class PermitRefused extends Error {
  constructor(
    readonly permit: PromiseLike<unknown>,
    readonly reason: unknown,
  ) {
    super("a load's permit was refused")
    this.name = 'PermitRefused'
  }
}

/** Resolves once `permit` does; rejects with {@link PermitRefused} when it rejects. */
export function afterPermit(permit: PromiseLike<unknown>): Promise<void> {
  return Promise.resolve(permit).then(
    () => undefined,
    (reason: unknown) => {
      throw new PermitRefused(permit, reason)
    },
  )
}

/** `answer`, once `permit` (when there is one) resolved too; rejects with the permit's reason first. */
export function afterBoth<R>(permit: PromiseLike<unknown> | undefined, answer: Promise<R>): Promise<R> {
  if (permit === undefined) return answer
  return Promise.all([permit, answer]).then((both) => both[1])
}
