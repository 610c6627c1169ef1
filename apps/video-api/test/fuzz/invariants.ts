import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { problemStatus } from '../../src/http/api_error.js'
import { codesNamed, type OpenApiDocument, type Responses } from '../support/openapi_document.js'
import type { Answer } from './http_send.js'

/**
 * Checks answers against the document: the invariants of the fuzz test. Schemas are compiled once
 * per (operation, status) with Ajv against the document's components.
 */
export class AnswerChecker {
  private readonly ajv: Ajv
  private readonly compiled = new Map<string, ValidateFunction>()

  constructor(private readonly document: OpenApiDocument) {
    this.ajv = new Ajv({ strict: false, allErrors: true })
    addFormats.default(this.ajv)
    this.ajv.addSchema({ components: document.components }, 'doc')
  }

  /**
   * The invariants one answer breaks (empty: none): no 5xx but a 503 with Retry-After; a status the
   * operation documents; an error as problem+json whose `status` is the HTTP status and whose
   * `code` the catalogue has, with that status, and the document names for it; a 2xx body that
   * matches its schema.
   */
  broken(key: string, answer: Answer): string[] {
    const [method, path] = key.split(' ') as [string, string]
    const responses = this.document.paths[path]?.[method.toLowerCase()]?.responses ?? {}
    const failures: string[] = []
    const { status } = answer
    if (status >= 500 && !(status === 503 && /^[1-9][0-9]*$/.test(String(answer.headers['retry-after']))))
      failures.push(`${status} without being a 503 with Retry-After`)
    const documented = responses[String(status)]
    if (!documented) failures.push(`${status} is not documented for ${key}`)
    if (status >= 400) {
      if (!/^application\/problem\+json/.test(answer.headers['content-type'] ?? ''))
        failures.push(`an error as ${answer.headers['content-type']}, not application/problem+json`)
      const problem = parse(answer.body) as { status?: unknown; code?: unknown } | undefined
      if (problem?.status !== status)
        failures.push(`problem status ${String(problem?.status)} on a ${status}`)
      const code = String(problem?.code)
      if (problemStatus[code as keyof typeof problemStatus] !== status)
        failures.push(`code ${code} is not a ${status} of the catalogue`)
      else if (documented && !codesNamed(documented.description).includes(code))
        failures.push(`code ${code} is not named in the document's ${status} of ${key}`)
      failures.push(
        ...this.schemaErrors(key, String(status), documented, problem, 'application/problem+json'),
      )
    } else if (status >= 200 && status < 300 && documented) {
      const body = status === 204 ? null : parse(answer.body)
      failures.push(...this.schemaErrors(key, String(status), documented, body, 'application/json'))
    }
    return failures
  }

  private schemaErrors(
    key: string,
    status: string,
    documented: Responses[string] | undefined,
    body: unknown,
    type: string,
  ): string[] {
    const schema = documented?.content?.[type]?.schema
    if (schema === undefined) return status === '204' ? [] : [`no ${type} schema for ${key} ${status}`]
    const id = `${key} ${status} ${type}`
    let validate = this.compiled.get(id)
    if (!validate) {
      const text = JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')
      validate = this.ajv.compile(JSON.parse(text) as object)
      this.compiled.set(id, validate)
    }
    if (validate(body)) return []
    return [`body does not match the ${status} schema: ${this.ajv.errorsText(validate.errors)}`]
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
