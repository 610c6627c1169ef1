import { LRUCache } from 'lru-cache'
import { type L2Store, UNAVAILABLE, type Unavailable } from '../l2/l2_store.js'

/** How many namespaces' generations a process remembers (older ones are read again on use). */
const REMEMBERED_NAMESPACES = 10_000

/**
 * This process's view of each namespace's generation (the number in its keys, moved by a clear).
 * Read once per namespace from Redis (`GET`), then kept current by the bus: a clear anywhere
 * publishes its new generation, and after a subscriber reconnect every generation is read again.
 * Generations only move forward here, so a read that raced a clear cannot move one back.
 */
export class NamespaceGenerations {
  private readonly known = new LRUCache<string, number>({ max: REMEMBERED_NAMESPACES })
  private readonly reading = new Map<string, Promise<number | Unavailable>>()

  constructor(private readonly l2: L2Store) {}

  /** The generation of `namespace`: at once when known, else after one `GET` (shared by concurrent callers). */
  current(namespace: string, force = false): number | Promise<number | Unavailable> {
    const known = this.known.get(namespace)
    if (known !== undefined) return known
    let pending = this.reading.get(namespace)
    if (pending === undefined) {
      pending = this.l2
        .generation(namespace, force)
        .then((read) => (read === UNAVAILABLE ? read : this.advance(namespace, read)))
        .finally(() => this.reading.delete(namespace))
      this.reading.set(namespace, pending)
    }
    return pending
  }

  /** The generation of `namespace` if this process knows it, without reading Redis. */
  peek(namespace: string): number | undefined {
    return this.known.get(namespace)
  }

  /** Records that `namespace` reached `generation`; returns the generation now known. */
  advance(namespace: string, generation: number): number {
    const known = this.known.get(namespace)
    if (known !== undefined && known >= generation) return known
    this.known.set(namespace, generation)
    return generation
  }

  /** Forgets every generation (bus messages may have been missed): each is read again on next use. */
  forget(): void {
    this.known.clear()
  }
}
