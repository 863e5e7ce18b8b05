import { ConfigError } from './configError.js'
import { VARIABLES, type VariableName, type VariableValue } from './variables.js'

export type Env = Readonly<Record<string, string | undefined>>

/**
 * The value of one variable, checked against its form; undefined when unset
 * or blank (the caller's default applies). `as` is the variable's real name
 * for the per-chain ones (SERVICE_RPC_URL_8453 read by the
 * 'SERVICE_RPC_URL_{chainId}' spec).
 */
export function readVariable<N extends VariableName>(env: Env, name: N, as: string = name): VariableValue<N> | undefined {
  const raw = env[as]?.trim()
  if (!raw) return undefined
  const spec = VARIABLES[name]
  const value = spec.parse(raw) as VariableValue<N> | undefined
  if (value === undefined) {
    const got = 'secret' in spec ? `got ${raw.length} characters` : 'shown' in spec && spec.shown ? `got ${spec.shown(raw)}` : `got "${raw}"`
    throw new ConfigError(`${as} must be ${spec.form}; ${got}`)
  }
  return value
}
