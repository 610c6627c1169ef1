/** Stable problem codes of the HTTP API, with their status. */
export const problemStatus = {
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  /** A rate limit quota is used up; comes with `Retry-After` and the RateLimit fields. */
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  /** The database guard shed the read (floodgate `OverloadedError`); comes with `Retry-After`. */
  OVERLOADED: 503,
} as const

export type ProblemCode = keyof typeof problemStatus

/**
 * An error the API answers with as `application/problem+json` (RFC 9457) carrying `code`, one of
 * the HTTP API's problem codes above (documented in the OpenAPI document and docs/api.md).
 */
export class ApiError extends Error {
  readonly code: ProblemCode
  readonly status: number
  /** The failing fields of a `VALIDATION_FAILED` answer (its `errors`), see {@link invalidField}. */
  readonly errors: FieldError[] | undefined

  constructor(code: ProblemCode, message: string, options?: { cause?: unknown; errors?: FieldError[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.code = code
    this.status = problemStatus[code]
    this.errors = options?.errors
  }
}

/** One failing field of a 400 `VALIDATION_FAILED`: `path` is a JSON pointer prefixed by the part (`/params/id`). */
export interface FieldError {
  path: string
  message: string
}

/**
 * A 400 `VALIDATION_FAILED` about one field, shaped as the schema's own answers: detail
 * `<field> <message>`, `errors: [{ path: '/<field>', message }]`.
 * @param field the field's path without the leading slash, e.g. `params/id`.
 */
export const invalidField = (field: string, message: string) =>
  new ApiError('VALIDATION_FAILED', `${field} ${message}`, { errors: [{ path: `/${field}`, message }] })

export const notFound = (what = 'video') => new ApiError('NOT_FOUND', `${what} not found`)
export const unauthorized = (detail = 'a valid bearer token is required') =>
  new ApiError('UNAUTHORIZED', detail)
export const forbidden = (detail: string) => new ApiError('FORBIDDEN', detail)
