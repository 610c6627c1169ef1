import { createRequire } from 'node:module'
import type * as OtelApi from '@opentelemetry/api'

/** Span attribute values floodgate sets (OpenTelemetry primitive attribute values). */
export type SpanAttributes = Record<string, string | number | boolean>

let api: typeof OtelApi | null | undefined
let tracer: OtelApi.Tracer | undefined

/** `@opentelemetry/api` when installed (an optional peer dependency), else null; looked up once. */
function otel(): typeof OtelApi | null {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)('@opentelemetry/api') as typeof OtelApi
    } catch {
      api = null
    }
  }
  return api
}

/**
 * Resolves `@opentelemetry/api` now rather than on the first span: the lookup is a synchronous
 * `require`, which would otherwise stall the first request of a process. Primitives call it when
 * they are created.
 */
export function warmTracing(): void {
  otel()
}

/**
 * Runs `fn` inside an OpenTelemetry span `name` (tracer `floodgate`), the span active in its
 * context so the app's own spans nest under it; an error is recorded on the span and rethrown.
 * Without `@opentelemetry/api` it only runs `fn`; without a registered tracer provider the API's
 * no-op tracer makes the span free of exporting cost.
 */
export async function inSpan<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
  const otelApi = otel()
  if (otelApi === null) return fn()
  tracer ??= otelApi.trace.getTracer('floodgate')
  const span = tracer.startSpan(name, { attributes })
  // A span with no valid context (no SDK registered, nothing active) has nothing to propagate.
  const run = otelApi.trace.isSpanContextValid(span.spanContext())
    ? () => otelApi.context.with(otelApi.trace.setSpan(otelApi.context.active(), span), fn)
    : fn
  try {
    return await run()
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error))
    span.setStatus({ code: otelApi.SpanStatusCode.ERROR })
    throw error
  } finally {
    span.end()
  }
}
