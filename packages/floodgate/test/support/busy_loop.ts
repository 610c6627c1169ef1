/** Keeps the event loop busy for `ms` (synchronous work, as a saturated process does). */
export function blockLoop(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {}
}
