import { ScriptContractError } from '../errors/index.js'

/**
 * A decoder for a script whose reply is one integer out of a fixed set: `codes` names each
 * integer (e.g. `{ released: 1, notOurs: 0 }`), the decoder answers the name. Each capability
 * keeps its scripts' tables in its `scripts.ts`, so no call site compares raw integers.
 * @param script the script's name, for the error.
 * @throws {ScriptContractError} (from the decoder) when the reply is not one of the codes.
 */
export function replyCodes<const Codes extends Record<string, number>>(
  script: string,
  codes: Codes,
): (reply: unknown) => keyof Codes {
  const names = new Map<unknown, keyof Codes>()
  for (const name of Object.keys(codes) as (keyof Codes)[]) names.set(codes[name], name)
  return (reply) => {
    const name = names.get(reply)
    if (name === undefined) throw new ScriptContractError(script, reply)
    return name
  }
}
