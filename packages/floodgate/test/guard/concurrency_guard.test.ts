import { setTimeout as sleep } from 'node:timers/promises'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import {
  bindGuardMetrics,
  ConcurrencyGuard,
  GuardAbortedError,
  InvalidArgumentError,
  OverloadedError,
} from '../../src/index.js'

/** A function the test holds open: `started` counts calls, `release()` lets every held call finish. */
function held() {
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => {
    open = resolve
  })
  const calls = { started: 0 }
  const fn = async () => {
    calls.started++
    await gate
    return calls.started
  }
  return { fn, calls, release: () => open() }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  )
}

describe('ConcurrencyGuard', () => {
  it('never runs more than maxConcurrent of 1,000 concurrent calls, and runs them all', async () => {
    const guard = new ConcurrencyGuard({ maxConcurrent: 7, maxQueue: 1_000, maxQueueWaitMs: 10_000 })
    let running = 0
    let peak = 0
    const results = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) =>
        guard.run(async () => {
          running++
          peak = Math.max(peak, running)
          expect(guard.inFlight).toBeLessThanOrEqual(7)
          await sleep(i % 3)
          running--
          return i
        }),
      ),
    )
    expect(peak).toBe(7)
    expect(results).toEqual(Array.from({ length: 1_000 }, (_, i) => i))
    expect(guard.inFlight).toBe(0)
    expect(guard.queued).toBe(0)
  })

  it('admits waiters in arrival order (FIFO)', async () => {
    const guard = new ConcurrencyGuard({ maxConcurrent: 1, maxQueueWaitMs: 5_000 })
    const h = held()
    const first = guard.run(h.fn)
    const order: number[] = []
    const rest = [1, 2, 3, 4].map((n) =>
      guard.run(async () => {
        order.push(n)
        await sleep(1)
      }),
    )
    expect(guard.queued).toBe(4)
    h.release()
    await Promise.all([first, ...rest])
    expect(order).toEqual([1, 2, 3, 4])
  })

  it('sheds at once with queue_full when slots and queue are taken; fn never runs', async () => {
    const guard = new ConcurrencyGuard({ name: 'db', maxConcurrent: 2, maxQueue: 3, maxQueueWaitMs: 5_000 })
    const h = held()
    const admitted = Array.from({ length: 5 }, () => guard.run(h.fn))
    expect([guard.inFlight, guard.queued]).toEqual([2, 3])
    let ran = false
    const started = performance.now()
    const error = await rejection(
      guard.run(async () => {
        ran = true
      }),
    )
    expect(performance.now() - started).toBeLessThan(50)
    expect(error).toBeInstanceOf(OverloadedError)
    expect(error).toMatchObject({ code: 'FLOODGATE_OVERLOADED', reason: 'queue_full', retryAfterMs: 5_000 })
    expect(ran).toBe(false)
    h.release()
    await Promise.all(admitted)
    expect(h.calls.started).toBe(5)
  })

  it('sheds with queue_timeout after maxQueueWaitMs in the queue; fn never runs, the queue place is freed', async () => {
    const guard = new ConcurrencyGuard({ maxConcurrent: 1, maxQueue: 1, maxQueueWaitMs: 100 })
    const h = held()
    const running = guard.run(h.fn)
    let ran = false
    const started = performance.now()
    const error = await rejection(
      guard.run(async () => {
        ran = true
      }),
    )
    const waited = performance.now() - started
    expect(error).toMatchObject({ code: 'FLOODGATE_OVERLOADED', reason: 'queue_timeout', retryAfterMs: 100 })
    expect(waited).toBeGreaterThanOrEqual(95)
    expect(waited).toBeLessThan(1_000)
    expect(guard.queued).toBe(0)
    h.release()
    await running
    expect(ran).toBe(false)
    // The timed-out waiter is skipped: the next call gets the freed slot at once.
    expect(await guard.run(async () => 'next')).toBe('next')
    expect(guard.inFlight).toBe(0)
  })

  it('frees the slot of an fn that throws, and passes the error on', async () => {
    const guard = new ConcurrencyGuard({ maxConcurrent: 1, maxQueue: 0 })
    const boom = new Error('boom')
    for (let i = 0; i < 3; i++) {
      expect(
        await rejection(
          guard.run(async () => {
            throw boom
          }),
        ),
      ).toBe(boom)
      expect(guard.inFlight).toBe(0)
    }
    expect(await guard.run(async () => 1)).toBe(1)
  })

  it('hands the slot of a failing call to the next waiter', async () => {
    const guard = new ConcurrencyGuard({ maxConcurrent: 1, maxQueueWaitMs: 5_000 })
    const failing = guard.run(async () => {
      await sleep(20)
      throw new Error('db down')
    })
    const next = guard.run(async () => 'ran')
    await expect(failing).rejects.toThrow('db down')
    expect(await next).toBe('ran')
    expect([guard.inFlight, guard.queued]).toEqual([0, 0])
  })

  it('never runs a shed call, even among 1,000 concurrent ones', async () => {
    const guard = new ConcurrencyGuard({ maxConcurrent: 4, maxQueue: 16, maxQueueWaitMs: 50 })
    const ran = new Set<number>()
    const outcomes = await Promise.allSettled(
      Array.from({ length: 1_000 }, (_, i) =>
        guard.run(async () => {
          ran.add(i)
          await sleep(10)
        }),
      ),
    )
    const shed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [i] : []))
    expect(outcomes.filter((o) => o.status === 'fulfilled').length).toBe(ran.size)
    for (const i of shed) {
      expect(ran.has(i)).toBe(false)
      expect((outcomes[i] as PromiseRejectedResult).reason).toBeInstanceOf(OverloadedError)
    }
    // 4 running + 16 queued on arrival; the rest of the burst is refused at once (the queued may time out).
    const reasons = shed.map((i) => ((outcomes[i] as PromiseRejectedResult).reason as OverloadedError).reason)
    expect(reasons.filter((r) => r === 'queue_full').length).toBe(980)
    expect(ran.size + reasons.filter((r) => r === 'queue_timeout').length).toBe(20)
    expect(ran.size).toBeGreaterThanOrEqual(4)
  })

  it('an aborted signal takes the call out of the queue without running it', async () => {
    const guard = new ConcurrencyGuard({ maxConcurrent: 1, maxQueueWaitMs: 5_000 })
    const h = held()
    const running = guard.run(h.fn)
    const controller = new AbortController()
    let ran = false
    const waiting = guard.run(
      async () => {
        ran = true
      },
      { signal: controller.signal },
    )
    expect(guard.queued).toBe(1)
    controller.abort(new Error('client gone'))
    const error = await rejection(waiting)
    expect(error).toBeInstanceOf(GuardAbortedError)
    expect(error).toMatchObject({ code: 'FLOODGATE_GUARD_ABORTED' })
    expect(guard.queued).toBe(0)
    await expect(guard.run(async () => 0, { signal: controller.signal })).rejects.toBeInstanceOf(
      GuardAbortedError,
    )
    h.release()
    await running
    expect(ran).toBe(false)
  })

  it('derives maxQueue from maxConcurrent and refuses options out of range', () => {
    expect(new ConcurrencyGuard({ maxConcurrent: 10 }).options).toEqual({
      name: 'guard',
      maxConcurrent: 10,
      maxQueue: 40,
      maxQueueWaitMs: 1_000,
      retryAfterMs: 1_000,
    })
    for (const bad of [{ maxConcurrent: 0 }, { maxConcurrent: 1.5 }, { maxConcurrent: 1, maxQueue: -1 }]) {
      expect(() => new ConcurrencyGuard(bad)).toThrow(InvalidArgumentError)
    }
    expect(() => new ConcurrencyGuard({ maxConcurrent: 1, maxQueueWaitMs: 0 })).toThrow(/maxQueueWaitMs/)
  })

  it('exports in-flight, queued, shed by reason and queue wait to prom-client, series present from the start', async () => {
    const registry = new Registry()
    const guard = new ConcurrencyGuard({ name: 'db', maxConcurrent: 1, maxQueue: 1, maxQueueWaitMs: 5_000 })
    bindGuardMetrics(registry, guard)
    const before = await registry.metrics()
    expect(before).toContain('floodgate_guard_shed_total{guard="db",reason="queue_full"} 0')
    expect(before).toContain('floodgate_guard_shed_total{guard="db",reason="queue_timeout"} 0')
    expect(before).toContain('floodgate_guard_in_flight{guard="db"} 0')
    expect(before).toContain('floodgate_guard_queue_wait_seconds_count{guard="db"} 0')
    const h = held()
    const running = [guard.run(h.fn), guard.run(h.fn)]
    await expect(guard.run(h.fn)).rejects.toBeInstanceOf(OverloadedError)
    const during = await registry.metrics()
    expect(during).toContain('floodgate_guard_in_flight{guard="db"} 1')
    expect(during).toContain('floodgate_guard_queued{guard="db"} 1')
    expect(during).toContain('floodgate_guard_shed_total{guard="db",reason="queue_full"} 1')
    h.release()
    await Promise.all(running)
    expect(await registry.metrics()).toContain('floodgate_guard_queue_wait_seconds_count{guard="db"} 2')
  })
})
