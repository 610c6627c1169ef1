import { createRequire } from 'node:module'
import type * as OtelApi from '@opentelemetry/api'

/** Span attribute values floodgate sets (OpenTelemetry primitive attribute values). */
export type SpanAttributes = Record<string, string | number | boolean>

let api: typeof OtelApi | null | undefined
let tracer: OtelApi.Tracer | undefined
let noopProvider: OtelApi.TracerProvider | undefined

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
 * Whether a span would record: a tracer provider is registered with the API. Without one the
 * API's tracer is a no-op whose spans only echo the active context, so {@link inSpan} can skip
 * them (and callers on hot paths their closures). Checked per call: an SDK may register later.
 * An API without `ProxyTracerProvider` (deprecated in 1.x) counts as recording.
 */
function recording(otelApi: typeof OtelApi): boolean {
  const ProxyProvider = otelApi.ProxyTracerProvider as typeof OtelApi.ProxyTracerProvider | undefined
  if (ProxyProvider === undefined) return true
  // the API's no-op provider: what an unregistered proxy delegates to
  noopProvider ??= new ProxyProvider().getDelegate()
  const provider = otelApi.trace.getTracerProvider()
  return !(provider instanceof ProxyProvider) || provider.getDelegate() !== noopProvider
}

/** Whether {@link inSpan} would record a span now (`@opentelemetry/api` installed, a provider registered). */
export function tracingOn(): boolean {
  const otelApi = otel()
  return otelApi !== null && recording(otelApi)
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
 * Without `@opentelemetry/api` or without a registered tracer provider it only runs `fn`.
 */
export function inSpan<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
  const otelApi = otel()
  if (otelApi !== null && recording(otelApi)) return spanned(otelApi, name, attributes, fn)
  // no async wrapper when nothing records: one promise and hop fewer per step
  try {
    return fn()
  } catch (error) {
    return Promise.reject(error)
  }
}

async function spanned<T>(
  otelApi: typeof OtelApi,
  name: string,
  attributes: SpanAttributes,
  fn: () => Promise<T>,
): Promise<T> {
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
