import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs'
import { utf8Text } from '../files/privateFiles.js'
import { duplicateJsonKey } from '../config/duplicateKeys.js'
import type { PolicyConfig, QuorumRule, TokenLimit } from '../types.js'
import { createAjv, describeValidationErrors } from '../validation.js'
import { defaultPolicyConfig } from './defaults.js'
import { policyFileSchema } from './policyFileSchema.js'
import { OperatorError } from '../operatorError.js'
import { hasValidChecksum } from '../builders/addresses.js'
import { NATIVE_TOKEN_ADDRESS } from '../constants.js'

export class PolicyConfigError extends OperatorError {
  override name = 'PolicyConfigError'
}

let validateFile: ReturnType<ReturnType<typeof createAjv>['compile']> | undefined

/** Validates a parsed policy file strictly and lays it over the defaults. */
export function parsePolicyConfig(json: unknown, source = 'policy'): PolicyConfig {
  validateFile ??= createAjv().compile(policyFileSchema)
  if (!validateFile(json)) {
    const version = (json as { version?: unknown } | null)?.version
    if (version !== undefined && version !== '1') {
      throw new PolicyConfigError(`${source}: policy/version ${JSON.stringify(version)} is not supported; this countersign reads version "1" (or no version)`)
    }
    throw new PolicyConfigError(`${source}: ${describeValidationErrors(validateFile.errors, 'policy')}`)
  }
  // The version names the format; it is not a policy setting.
  const { version: _version, requireQuorumAbove, ...file } = structuredClone(json) as Omit<Partial<PolicyConfig>, 'requireQuorumAbove'> & {
    version?: string
    requireQuorumAbove?: QuorumFile
  }
  assertPolicyAddresses(file, requireQuorumAbove, source)
  const config: PolicyConfig = { ...defaultPolicyConfig(), ...file }
  config.tokenLimits = lowercaseKeys(file.tokenLimits ?? {}, source, 'tokenLimits')
  config.requireQuorumAbove = requireQuorumAbove === undefined ? null : quorumRule(requireQuorumAbove, source)
  return config
}

/**
 * Addresses an operator wrote that would load but mean something else (found
 * by review): a mixed-case address whose EIP-55 checksum fails is most likely
 * a typo, as in an intent; and the native pseudo-address as a token, which no
 * token rule ever meets (native value goes by maxValueWei,
 * requireApprovalAbove.valueWei and requireQuorumAbove.valueWei), so a limit
 * written there silently limited nothing.
 */
function assertPolicyAddresses(file: Partial<Pick<PolicyConfig, 'tokenAllowlist' | 'contractAllowlist' | 'recipientAllowlist' | 'tokenLimits'>>, quorum: QuorumFile | undefined, source: string): void {
  const listed: Array<[where: string, address: string]> = [
    ...(file.tokenAllowlist ?? []).map((a, i): [string, string] => [`tokenAllowlist/${i}`, a]),
    ...(file.contractAllowlist ?? []).map((a, i): [string, string] => [`contractAllowlist/${i}`, a]),
    ...(file.recipientAllowlist ?? []).map((a, i): [string, string] => [`recipientAllowlist/${i}`, a]),
    ...Object.keys(file.tokenLimits ?? {}).map((a): [string, string] => [`tokenLimits/${a}`, a]),
    ...Object.keys(quorum?.tokens ?? {}).map((a): [string, string] => [`requireQuorumAbove/tokens/${a}`, a]),
  ]
  for (const [where, address] of listed) {
    if (!hasValidChecksum(address)) {
      throw new PolicyConfigError(`${source}: policy/${where} ${address} is mixed case but fails its EIP-55 checksum (a typo?); write the checksummed address or the address in lower case`)
    }
    const isToken = where.startsWith('token') || where.startsWith('requireQuorumAbove')
    if (isToken && address.toLowerCase() === NATIVE_TOKEN_ADDRESS.toLowerCase()) {
      throw new PolicyConfigError(
        `${source}: policy/${where} names the native pseudo-token ${NATIVE_TOKEN_ADDRESS}, which no token rule applies to: limit native value with maxValueWei, requireApprovalAbove.valueWei or requireQuorumAbove.valueWei`,
      )
    }
  }
}

/** requireQuorumAbove as the file spells it (the schema has checked each field). */
interface QuorumFile {
  valueWei?: string
  tokens?: Record<string, string>
  approvals: number
}

/** A quorum rule with no figure would never apply: refused rather than silently ignored. */
function quorumRule(file: QuorumFile, source: string): QuorumRule {
  const tokens = lowercaseKeys(file.tokens ?? {}, source, 'requireQuorumAbove/tokens')
  if (file.valueWei === undefined && Object.keys(tokens).length === 0) {
    throw new PolicyConfigError(`${source}: policy/requireQuorumAbove must have valueWei or at least one token in tokens (otherwise no request would ever need the quorum)`)
  }
  return { valueWei: file.valueWei ?? null, tokens, approvals: file.approvals }
}

/**
 * Lowercased keys so lookups by any spelling of an address agree. Two keys
 * for one token (differing only in case) would leave one limit silently
 * ignored, so the file is refused instead.
 */
function lowercaseKeys<T extends TokenLimit | string>(limits: Record<string, T>, source: string, where: string): Record<string, T> {
  const out: Record<string, T> = {}
  for (const [key, limit] of Object.entries(limits)) {
    const k = key.toLowerCase()
    if (k in out) throw new PolicyConfigError(`${source}: policy/${where} has token ${k} more than once (keys differ only in case)`)
    out[k] = limit
  }
  return out
}

/** Far more than any policy needs; a device or a runaway file in its place is refused, not read into memory. */
const MAX_POLICY_FILE_BYTES = 1024 * 1024

export function loadPolicyFile(path: string): PolicyConfig {
  let text: string
  try {
    text = readPolicyText(path)
  } catch (err) {
    if (err instanceof PolicyConfigError) throw err
    throw new PolicyConfigError(`cannot read policy file ${path}: ${(err as Error).message}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new PolicyConfigError(`policy file ${path} is not valid JSON: ${(err as Error).message}`)
  }
  const twice = duplicateJsonKey(text, 'policy')
  if (twice) throw new PolicyConfigError(`policy file ${path}: ${twice} is given twice; JSON would keep only the last, so the file would not mean what it reads`)
  return parsePolicyConfig(json, `policy file ${path}`)
}

/** A regular file (a FIFO is refused at once: O_NONBLOCK), at most MAX_POLICY_FILE_BYTES, as UTF-8 text. */
function readPolicyText(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw new PolicyConfigError(`policy file ${path} is not a regular file`)
    if (st.size > MAX_POLICY_FILE_BYTES) throw new PolicyConfigError(`policy file ${path} is larger than ${MAX_POLICY_FILE_BYTES} bytes`)
    const text = utf8Text(readFileSync(fd))
    if (text === null) throw new PolicyConfigError(`policy file ${path} is not UTF-8 text`)
    return text
  } finally {
    closeSync(fd)
  }
}
