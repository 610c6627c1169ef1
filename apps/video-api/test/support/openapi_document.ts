import { problemStatus } from '../../src/http/api_error.js'

/** An operation's responses in the OpenAPI document. */
export type Responses = Record<
  string,
  { description?: string; content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> }
>

/** The document, as far as answers are checked against it. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Responses } & Record<string, unknown>>>
  components: { schemas: Record<string, unknown> }
}

/** The problem codes a response's description names (the document lists them per status). */
export function codesNamed(description: string | undefined): string[] {
  return [...(description ?? '').matchAll(/\b[A-Z][A-Z_]*[A-Z]\b/g)]
    .map((m) => m[0])
    .filter((word) => word in problemStatus)
}
