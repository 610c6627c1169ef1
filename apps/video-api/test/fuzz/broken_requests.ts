import fc from 'fast-check'
import { anyJson, oddString, type Schema, schemaValue } from './schema_values.js'

/** One operation of the OpenAPI document, as the generator needs it. */
export interface DocOperation {
  /** `"<METHOD> <OpenAPI path>"`, e.g. `PUT /videos/{id}/like`. */
  key: string
  method: string
  /** The OpenAPI path, `{name}` for each path parameter. */
  path: string
  pathParams: { name: string; schema: Schema }[]
  query: { name: string; schema: Schema }[]
  /** The `application/json` request body schema, if the operation has one. */
  body?: Schema
}

/** What the generated requests are made of besides the schemas (made by the test's setup). */
export interface Fixtures {
  /** Ids worth putting in a path: videos of each visibility and state, users, absent and extreme ids. */
  ids: readonly string[]
  /** `Authorization` values with the valid tokens of users and an admin. */
  validAuthorizations: readonly string[]
  /** `Authorization` values with well-formed but refused tokens (expired, tampered, another database, …). */
  refusedAuthorizations: readonly string[]
  /** Query values worth trying by parameter name (a real page cursor: random ones are all refused). */
  queryValues: Readonly<Record<string, readonly string[]>>
  /** BODY_LIMIT_BYTES of the app: some bodies go just over it. */
  bodyLimitBytes: number
}

/** A request as sent on the socket; `breaks` says how it was broken, for the failure message. */
export interface FuzzRequest {
  method: string
  /** Path and query, as written on the request line. */
  target: string
  headers: Record<string, string>
  body?: Buffer
  /** Send the body with `Transfer-Encoding: chunked` instead of a `Content-Length`. */
  chunked: boolean
  breaks: string[]
}

interface Part<T> {
  value: T
  breaks: string[]
}
const ok = <T>(value: T): Part<T> => ({ value, breaks: [] })
const broken = <T>(value: T, how: string): Part<T> => ({ value, breaks: [how] })

/** Strings of bytes `min`…0xff but DEL, as latin1: what Node's HTTP client lets through (it refuses others). */
const bytesFrom = (min: number, maxLength: number) =>
  fc.string({
    unit: fc
      .integer({ min, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength,
  })
/** Text for a request line (no space) and for a header value. */
const latin1 = bytesFrom(0x21, 30)
const headerText = bytesFrom(0x20, 60)
const BROKEN_ESCAPES = [
  '%zz',
  '%',
  '%E0%A4%A',
  '%C0%AF',
  '%FF',
  '%00',
  '1%2F2',
  '..',
  '.',
  '%2e%2e',
  '%u0031',
]

/** `text` %-encoded as UTF-8, as encodeURIComponent does, but a lone surrogate is sent as U+FFFD instead of throwing. */
function percentEncoded(text: string): string {
  return text.replace(/[^A-Za-z0-9\-_.!~*'()]/gu, (c) =>
    [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  )
}

/** A path parameter: a fixture id, a schema value, or a broken one (wrong type, too long, bad encoding). */
function pathValue(schema: Schema, fixtures: Fixtures): fc.Arbitrary<Part<string>> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...fixtures.ids).map(ok) },
    { weight: 1, arbitrary: schemaValue(schema).map((v) => ok(percentEncoded(String(v)))) },
    {
      weight: 1,
      arbitrary: oddString.map((s) => broken(percentEncoded(s).slice(0, 20_000), 'odd path id')),
    },
    {
      weight: 1,
      // over the 19 digits the schema allows, past Fastify's old 100 and past Node's 16 KiB request line
      arbitrary: fc
        .oneof(fc.integer({ min: 20, max: 120 }), fc.integer({ min: 100, max: 20_000 }))
        .map((n) => broken('7'.repeat(n), `id of ${n} digits`)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...BROKEN_ESCAPES), latin1)
        .map(([bad, rest]) => broken(bad + rest.replace(/[/?#]/g, ''), 'raw bytes or a broken %-escape')),
    },
  )
}

/** The query string: schema values, plus unknown, repeated, odd or badly encoded parameters. */
function queryString(op: DocOperation, fixtures: Fixtures): fc.Arbitrary<Part<string>> {
  const known = op.query.map(({ name, schema }) =>
    fc.option(
      fc.oneof(
        {
          weight: 4,
          arbitrary: fc
            .oneof(schemaValue(schema), ...(fixtures.queryValues[name] ?? []).map((v) => fc.constant(v)))
            .map((v) => ok(`${name}=${percentEncoded(String(v))}`)),
        },
        { weight: 1, arbitrary: oddString.map((s) => broken(`${name}=${percentEncoded(s)}`, `odd ${name}`)) },
        {
          weight: 1,
          arbitrary: fc
            .tuple(schemaValue(schema), schemaValue(schema))
            .map(([a, b]) =>
              broken(
                `${name}=${percentEncoded(String(a))}&${name}=${percentEncoded(String(b))}`,
                `${name} twice`,
              ),
            ),
        },
      ),
      { freq: 2 },
    ),
  )
  const extra = fc.oneof(
    { weight: 12, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constant(broken('unknown=1', 'unknown query parameter')) },
    { weight: 1, arbitrary: latin1.map((s) => broken(s.replace(/[#]/g, ''), 'raw query bytes')) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...BROKEN_ESCAPES)
        .map((s) => broken(`limit=${s}`, 'broken %-escape in the query')),
    },
  )
  return fc.tuple(fc.tuple(...known), extra).map(([parts, more]) => {
    const all = [...parts, more].filter((p): p is Part<string> => p !== null)
    return {
      value: all.length === 0 ? '' : `?${all.map((p) => p.value).join('&')}`,
      breaks: all.flatMap((p) => p.breaks),
    }
  })
}

/** The schema's value with some fields dropped, retyped or added, or a value of another type. */
function jsonValueFor(schema: Schema): fc.Arbitrary<Part<unknown>> {
  const keys = [...Object.keys(schema.properties ?? {}), 'unknownField', 'constructor']
  return fc.oneof(
    { weight: 6, arbitrary: schemaValue(schema).map(ok) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          schemaValue(schema),
          fc.array(fc.tuple(fc.constantFrom(...keys), fc.option(anyJson, { freq: 4 })), {
            minLength: 1,
            maxLength: 3,
          }),
        )
        .map(([value, edits]) => {
          if (typeof value !== 'object' || value === null || Array.isArray(value)) return ok(value)
          const edited: Record<string, unknown> = { ...value }
          for (const [key, replacement] of edits) {
            if (replacement === null) delete edited[key]
            else
              Object.defineProperty(edited, key, {
                value: replacement,
                enumerable: true,
                writable: true,
                configurable: true,
              })
          }
          return broken(edited, `fields ${edits.map(([key, r]) => (r === null ? `-${key}` : key)).join(',')}`)
        }),
    },
    { weight: 1, arbitrary: anyJson.map((value) => broken(value, 'body of another type')) },
  )
}

/** The bytes of a body: JSON of `value`, or broken bytes (truncated, nested deep, not UTF-8, over the limit, …). */
function bodyBytes(schema: Schema | undefined, limit: number): fc.Arbitrary<Part<Buffer | undefined>> {
  const json = (schema ? jsonValueFor(schema) : anyJson.map((v) => broken(v, 'body where none is read'))).map(
    (p) => ({ ...p, value: Buffer.from(JSON.stringify(p.value) ?? 'null') }),
  )
  return fc.oneof(
    { weight: schema ? 1 : 24, arbitrary: fc.constant(ok(undefined)) },
    { weight: 12, arbitrary: json },
    {
      weight: 1,
      arbitrary: fc
        .tuple(json, fc.nat())
        .map(([p, cut]) => broken(p.value.subarray(0, cut % Math.max(1, p.value.length)), 'truncated JSON')),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 10, max: 30_000 }), fc.boolean())
        .map(([depth, arrays]) =>
          broken(
            Buffer.from(
              arrays
                ? `${'['.repeat(depth)}${']'.repeat(depth)}`
                : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
            ),
            `JSON nested ${depth} deep`,
          ),
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}')
        .map((text) => broken(Buffer.from(text), 'prototype poisoning')),
    },
    {
      weight: 1,
      arbitrary: json.map((p) =>
        broken(
          Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), p.value, Buffer.from([0xff, 0xc0, 0x80])]),
          'BOM and bytes that are not UTF-8',
        ),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: limit - 16, max: limit * 2 })
        .map((n) => broken(Buffer.from(`{"title":"${'t'.repeat(n)}"}`), `body of ${n + 12} bytes`)),
    },
    { weight: 1, arbitrary: headerText.map((text) => broken(Buffer.from(text, 'latin1'), 'not JSON')) },
  )
}

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/JSON',
  'application/problem+json',
  'application/json, text/plain',
  ';;;',
  '',
]

/** Headers: an `Authorization` (none, valid, broken), a content type, sometimes odd extras or 16 KiB of padding. */
function headersFor(fixtures: Fixtures, hasBody: boolean): fc.Arbitrary<Part<Record<string, string>>> {
  const authorization = fc.oneof(
    { weight: 2, arbitrary: fc.constant(ok<string | undefined>(undefined)) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(...fixtures.validAuthorizations).map((a) => ok<string | undefined>(a)),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...fixtures.refusedAuthorizations)
        .map((a) => broken<string | undefined>(a, 'refused token')),
    },
    {
      weight: 1,
      arbitrary: fc
        .oneof(
          latin1.map((s) => `Bearer ${s}`),
          headerText,
          fc.constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'bearer x.y.z'),
        )
        .map((a) => broken<string | undefined>(a, 'malformed Authorization')),
    },
  )
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant(ok<string | undefined>(hasBody ? 'application/json' : undefined)) },
    { weight: 1, arbitrary: fc.constant(ok<string | undefined>('application/json; charset=utf-8')) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...CONTENT_TYPES)
        .map((t) => broken<string | undefined>(t, `content-type ${t}`)),
    },
  )
  const extra = fc.oneof(
    { weight: 16, arbitrary: fc.constant(ok<Record<string, string>>({})) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 16_000, max: 20_000 })
        .map((n) => broken({ 'x-padding': 'p'.repeat(n) }, `${n} bytes of header`)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            'x-request-id',
            'accept',
            'accept-encoding',
            'content-encoding',
            'x-forwarded-for',
            'user-agent',
          ),
          headerText,
        )
        .map(([name, value]) => broken({ [name]: value }, `odd ${name}`)),
    },
  )
  return fc.tuple(authorization, contentType, extra).map(([auth, type, more]) => {
    const headers: Record<string, string> = { ...more.value }
    if (auth.value !== undefined) headers.authorization = auth.value
    if (type.value !== undefined) headers['content-type'] = type.value
    return { value: headers, breaks: [...auth.breaks, ...type.breaks, ...more.breaks] }
  })
}

/** Requests for `op`: built from its schemas and the fixtures, then broken in one or more places (or not at all). */
export function requestsFor(op: DocOperation, fixtures: Fixtures): fc.Arbitrary<FuzzRequest> {
  const params = op.pathParams.map(({ name, schema }) =>
    pathValue(schema, fixtures).map((p) => ({ name, ...p })),
  )
  return fc
    .tuple(
      fc.tuple(...params),
      queryString(op, fixtures),
      bodyBytes(op.body, fixtures.bodyLimitBytes),
      fc.boolean(),
    )
    .chain(([ids, query, body, chunked]) =>
      headersFor(fixtures, body.value !== undefined).map((headers) => {
        let path = op.path
        for (const id of ids) path = path.replace(`{${id.name}}`, id.value)
        return {
          method: op.method,
          target: path + query.value,
          headers: headers.value,
          body: body.value,
          chunked: body.value !== undefined && chunked,
          breaks: [...ids.flatMap((id) => id.breaks), ...query.breaks, ...body.breaks, ...headers.breaks],
        }
      }),
    )
}

/** The request in a line or two, long parts cut, for a failure message. */
export function describeRequest(request: FuzzRequest): string {
  const cut = (text: string) => (text.length > 160 ? `${text.slice(0, 160)}… (${text.length} chars)` : text)
  const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${cut(value)}`)
  const body = request.body === undefined ? '' : `\n  body: ${cut(request.body.toString('latin1'))}`
  return `${request.method} ${cut(request.target)}\n  ${headers.join('\n  ')}${body}\n  broken: ${request.breaks.join('; ') || 'nothing'}`
}
