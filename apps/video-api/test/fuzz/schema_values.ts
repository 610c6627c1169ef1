import fc from 'fast-check'

/** The part of JSON Schema (as @fastify/swagger writes TypeBox schemas into the document) used here. */
export interface Schema {
  type?: string
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean
  items?: Schema
  anyOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  pattern?: string
  format?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  $ref?: string
}

/**
 * Values that satisfy `schema` most of the time: enums and constants, strings from the
 * pattern (fast-check's `stringMatching`; patterns it cannot read, such as a lookahead, fall back
 * to strings of the allowed length), http(s) URLs for `format: uri`, objects with the required
 * keys and some optional ones. Near misses are welcome: they are refused with a 400.
 */
export function schemaValue(schema: Schema): fc.Arbitrary<unknown> {
  if (schema.enum) return fc.constantFrom(...schema.enum)
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map(schemaValue))
  switch (schema.type) {
    case 'string':
      return stringOf(schema)
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 })
    case 'number':
      return fc.double({ noNaN: true })
    case 'boolean':
      return fc.boolean()
    case 'array':
      return fc.array(schemaValue(schema.items ?? {}), { maxLength: 4 })
    case 'object':
      return objectOf(schema)
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const maxLength = schema.maxLength ?? 64
  if (schema.format === 'uri')
    return fc.webUrl({ validSchemes: ['http', 'https'] }).filter((url) => url.length <= maxLength)
  if (schema.pattern !== undefined) {
    try {
      return fc.stringMatching(new RegExp(schema.pattern, 'u')).map((s) => s.slice(0, maxLength))
    } catch {
      // a construct stringMatching does not support: strings of the allowed length below
    }
  }
  return fc.string({
    minLength: schema.minLength ?? 0,
    maxLength: Math.min(maxLength, 120),
    unit: 'grapheme',
  })
}

function objectOf(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {}
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [key, property] of Object.entries(properties)) model[key] = schemaValue(property)
  return fc.record(model, { requiredKeys: (schema.required ?? []).filter((key) => key in properties) })
}

/** Text that tends to break things: NUL, lone surrogates, direction marks, escapes, quotes, SQL, very long. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\uD800',
    'x\uDC00y',
    '\u202Eevil',
    '😀',
    '\t\r\n',
    '%00',
    '%zz',
    '../../etc/passwd',
    "' OR 1=1 --",
    '{{7*7}}',
    '<script>',
    '__proto__',
    '9'.repeat(25),
    '-1',
    '1e309',
  ),
  fc.integer({ min: 101, max: 70_000 }).map((n) => 'x'.repeat(n)),
)

/** A JSON value of any type (for "wrong type"), odd strings included. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 63, -0, [], {}),
  fc.double(),
  oddString,
  fc.jsonValue({ maxDepth: 3 }),
)
