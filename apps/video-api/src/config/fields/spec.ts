/** How a field's value is parsed and checked. */
export type FieldKind =
  | { kind: 'int'; min: number; max: number }
  | { kind: 'string'; allowEmpty?: boolean }
  | { kind: 'bool' }
  | { kind: 'url'; protocols: readonly string[] }
  | { kind: 'enum'; values: readonly string[] }

/** One configuration option: its environment variable, TOML key, default, type and doc. */
export interface FieldSpec {
  /** Environment variable, also the error-message name of the field. */
  env: string
  /** Key in the TOML file (snake_case). */
  toml: string
  /** Default as it would appear in the environment; `undefined` = unset. */
  default: string | undefined
  /** `loadConfig` fills an unset value itself (so the field is never `undefined` in `Config`). */
  filledAtLoad?: true
  type: FieldKind
  doc: string
}
