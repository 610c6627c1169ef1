import type { FieldKind, FieldSpec, fields } from './fields.js'

/** The value type a field kind parses to. */
type ValueOf<K extends FieldKind> = K extends { kind: 'int' }
  ? number
  : K extends { kind: 'bool' }
    ? boolean
    : K extends { kind: 'enum'; values: readonly (infer V)[] }
      ? V
      : string

/** A field without a default may be `undefined`, unless `loadConfig` fills it. */
type FieldValue<F extends FieldSpec> = F extends { filledAtLoad: true }
  ? ValueOf<F['type']>
  : F['default'] extends undefined
    ? ValueOf<F['type']> | undefined
    : ValueOf<F['type']>

/**
 * The validated configuration, derived from the field table in `fields.ts` (the one place a field
 * is declared: its name, type, default and doc). Units are in the names.
 */
export type Config = { -readonly [N in keyof typeof fields]: FieldValue<(typeof fields)[N]> }
