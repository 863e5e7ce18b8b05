import { readFileSync } from 'node:fs'
import type { PolicyConfig } from '../types.js'
import { createAjv, describeValidationErrors } from '../validation.js'
import { defaultPolicyConfig } from './defaults.js'
import { policyFileSchema } from './policyFileSchema.js'

export class PolicyConfigError extends Error {
  override name = 'PolicyConfigError'
}

let validateFile: ReturnType<ReturnType<typeof createAjv>['compile']> | undefined

/** Validates a parsed policy file strictly and lays it over the defaults. */
export function parsePolicyConfig(json: unknown, source = 'policy'): PolicyConfig {
  validateFile ??= createAjv().compile(policyFileSchema)
  if (!validateFile(json)) {
    throw new PolicyConfigError(`${source}: ${describeValidationErrors(validateFile.errors, 'policy')}`)
  }
  const file = json as Partial<PolicyConfig>
  const config = { ...defaultPolicyConfig(), ...file }
  // Lowercased keys so lookups by any spelling of an address agree.
  config.tokenLimits = Object.fromEntries(Object.entries(file.tokenLimits ?? {}).map(([k, v]) => [k.toLowerCase(), v]))
  return config
}

export function loadPolicyFile(path: string): PolicyConfig {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new PolicyConfigError(`cannot read policy file ${path}: ${(err as Error).message}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new PolicyConfigError(`policy file ${path} is not valid JSON: ${(err as Error).message}`)
  }
  return parsePolicyConfig(json, `policy file ${path}`)
}
