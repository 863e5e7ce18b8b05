import { createHash, timingSafeEqual } from 'node:crypto'
import { tokenMatches } from '@countersign/shared/http/operatorAuth'
import { duplicateJsonKey, isOperatorTokenShape, OperatorError, readSecretFile } from '@countersign/shared'

export class OperatorsFileError extends OperatorError {
  override name = 'ConfigError'
}

/** Who presented a token: a named operator, or (name null) the one operator token of a single-token setup. */
export interface OperatorIdentity {
  name: string | null
}

/** Who may decide. `identify` answers null for anything that is not an operator's token. */
export interface Operators {
  identify(presented: unknown): OperatorIdentity | null
  /** Named operators configured (0 for the single token). */
  readonly named: number
}

/** The single operator token (DATA_DIR/operator-token or SERVICE_OPERATOR_TOKEN): decisions carry no name. */
export function singleTokenOperators(token: string): Operators {
  return {
    identify: (presented) => (tokenMatches(presented, token) ? { name: null } : null),
    named: 0,
  }
}

export interface NamedOperator {
  name: string
  /** hex SHA-256 of the operator's token: the file never holds a token itself. */
  tokenSha256: string
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest()

/** SERVICE_OPERATORS_FILE: each operator's token is checked against every hash in constant time. */
export function namedOperators(list: readonly NamedOperator[]): Operators {
  const hashes = list.map((o) => ({ name: o.name, hash: Buffer.from(o.tokenSha256, 'hex') }))
  return {
    identify(presented) {
      // The file holds only hashes, so a weak token cannot be refused at start: it is never accepted instead. Found
      // by review: sha256("a") signed in with "a", and the agent can reach decide through the gateway to guess.
      if (typeof presented !== 'string' || !isOperatorTokenShape(presented)) return null
      const given = sha256(presented)
      let found: string | null = null
      // No early exit: the time taken does not say which entry matched.
      for (const o of hashes) if (timingSafeEqual(given, o.hash) && found === null) found = o.name
      return found === null ? null : { name: found }
    },
    named: hashes.length,
  }
}

// Ends with a letter, digit, _, @ or -: "alice " and "alice." read as alice on a card (found by review).
const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9 ._@-]{0,62}[A-Za-z0-9_@-])?$/
const HEX64 = /^[0-9a-f]{64}$/
const MAX_FILE_BYTES = 64 * 1024

/** Validates the operators file's JSON: {"operators": [{"name", "tokenSha256"}, …]}, names and hashes unique. */
export function parseOperators(json: unknown, label = 'SERVICE_OPERATORS_FILE'): NamedOperator[] {
  const root = json as { operators?: unknown } | null
  if (typeof root !== 'object' || root === null || Array.isArray(root) || Object.keys(root).some((k) => k !== 'operators') || !Array.isArray(root.operators)) {
    throw new OperatorsFileError(`${label} must be {"operators": [{"name": "...", "tokenSha256": "<hex sha256 of the token>"}, ...]}`)
  }
  if (root.operators.length === 0 || root.operators.length > 100) throw new OperatorsFileError(`${label} must list 1 to 100 operators`)
  const names = new Set<string>()
  const hashes = new Set<string>()
  return root.operators.map((o: unknown, i: number) => {
    const e = o as Record<string, unknown> | null
    if (typeof e !== 'object' || e === null || Object.keys(e).some((k) => k !== 'name' && k !== 'tokenSha256')) {
      throw new OperatorsFileError(`${label}: operators[${i}] must have exactly "name" and "tokenSha256"`)
    }
    if (typeof e.name !== 'string' || !NAME.test(e.name) || /[ .]{2}/.test(e.name)) throw new OperatorsFileError(`${label}: operators[${i}].name must be 1 to 64 letters, digits, space, . _ @ - (starting with a letter or digit, not ending with a space or a dot, no two spaces or dots in a row)`)
    if (typeof e.tokenSha256 !== 'string' || !HEX64.test(e.tokenSha256)) {
      throw new OperatorsFileError(`${label}: operators[${i}].tokenSha256 must be 64 lowercase hex digits (printf %s "$TOKEN" | sha256sum)`)
    }
    // Names that differ only in case are one person on a card: two entries of them met a quorum of two alone.
    if (names.has(e.name.toLowerCase())) throw new OperatorsFileError(`${label}: operator name "${e.name}" appears twice (names are compared ignoring case)`)
    if (hashes.has(e.tokenSha256)) throw new OperatorsFileError(`${label}: operators "${e.name}" and another share a token`)
    names.add(e.name.toLowerCase())
    hashes.add(e.tokenSha256)
    return { name: e.name, tokenSha256: e.tokenSha256 }
  })
}

/** Reads SERVICE_OPERATORS_FILE: a regular file of mode 0600 (no group or other bits), validated whole at start. */
export function loadOperatorsFile(file: string): Operators {
  const label = `SERVICE_OPERATORS_FILE ${file}`
  const text = readSecretFile(file, { variable: 'SERVICE_OPERATORS_FILE', maxBytes: MAX_FILE_BYTES, refuse: (message) => new OperatorsFileError(message) })
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new OperatorsFileError(`${label} is not JSON: ${(err as Error).message}`)
  }
  const twice = duplicateJsonKey(text)
  if (twice) throw new OperatorsFileError(`${label}: ${twice} is given twice; JSON would keep only the last`)
  return namedOperators(parseOperators(json, label))
}
