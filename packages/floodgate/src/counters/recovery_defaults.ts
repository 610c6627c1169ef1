/** Defaults of {@link CountsRecovery} and its rebuild (`rebuild.ts`). */
export const RECOVERY_DEFAULTS = {
  /** Rows per keyset page of the rebuild (rows). */
  chunkSize: 2000,
  /**
   * Most restore steps (Lua calls) of a rebuild awaiting their reply at once (calls). A page sent
   * at once (up to `chunkSize` calls) queued ahead of the request path's commands on the same
   * single-threaded Redis and burst this process's event loop while Redis came back empty
   * (bench avalanche, t = 37–39 s); 16 keeps Redis busy (a reply frees the next call) while a
   * read waits behind at most 16 small scripts (~16 × 250 members at worst).
   */
  stepsInFlight: 16,
} as const
