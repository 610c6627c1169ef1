/**
 * A Bloom rebuild source the test holds open: `reading` resolves when the rebuild starts reading
 * it (the rebuild lock is held from then on), and it yields `items` as one chunk only after
 * `release()`. Plays "another instance, rebuilding right now".
 */
export function heldSource(items: readonly string[]): {
  source: AsyncIterable<readonly string[]>
  reading: Promise<void>
  release: () => void
} {
  let release: () => void = () => {}
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let started: () => void = () => {}
  const reading = new Promise<void>((resolve) => {
    started = resolve
  })
  async function* source() {
    started()
    await released
    yield items
  }
  return { source: source(), reading, release }
}
