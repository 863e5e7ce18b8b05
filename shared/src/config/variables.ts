// Every SERVICE_* variable a process or CLI reads, with its accepted form:
// one table, so that each reader checks a value the same way wherever it is
// read, every refusal names the variable and its form, and the docs'
// configuration table can be checked against it (config.docs.test.ts).
import { isIP } from 'node:net'
import path from 'node:path'
import { SUPPORTED_CHAIN_IDS, type ChainId } from '../types.js'

export interface VariableSpec<T> {
  /** The accepted form, worded to follow "must be" (errors) and shown in the docs. */
  readonly form: string
  /** The value, or undefined when `raw` (trimmed, never empty) is not of the form. */
  readonly parse: (raw: string) => T | undefined
  /** A secret: a refusal says its length, never the value. */
  readonly secret?: true
  /** How a refusal shows the value, when not as given (a URL whose path or credentials may hold an API key). */
  readonly shown?: (raw: string) => string
}

const spec = <T>(form: string, parse: (raw: string) => T | undefined, secret?: true): VariableSpec<T> => (secret ? { form, parse, secret } : { form, parse })

/**
 * A URL as a refusal may print it: scheme and host only. Providers put API
 * keys in the path (…/v2/<key>) or the user info, and the refusal goes to
 * logs; what is left says which endpoint was meant.
 */
export function urlForMessages(raw: string): string {
  try {
    const url = new URL(raw)
    const hidden = url.username || url.password || url.pathname.length > 1 || url.search || url.hash
    return `"${url.protocol}//${url.host}${hidden ? '/…' : ''}" (path and credentials not shown)`
  } catch {
    return `${raw.length} characters (not shown: it may hold a key)`
  }
}

/**
 * A listen port. 0 is refused: the kernel would pick a port nobody else
 * knows, while the launcher, dev-chain.json and the other processes would
 * use ":0" (found by review); tests that want any free port bind 0 in code.
 */
const port = spec('a port number from 1 to 65535', (raw) => (/^[0-9]{1,5}$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 65535 ? Number(raw) : undefined))

function wholeNumber(min: number, max: number, unit = ''): VariableSpec<number> {
  return spec(`a whole number from ${min} to ${max}${unit ? ` (${unit})` : ''}`, (raw) => {
    if (!/^[0-9]{1,15}$/.test(raw)) return undefined
    const n = Number(raw)
    return n >= min && n <= max ? n : undefined
  })
}

function oneOf<const T extends string>(values: readonly T[]): VariableSpec<T> {
  const form = values.length === 2 ? `${values[0]} or ${values[1]}` : `one of ${values.join(', ')}`
  return spec(form, (raw) => (values as readonly string[]).includes(raw) ? (raw as T) : undefined)
}

/** A host name (RFC 1123 labels) or an IPv4/IPv6 address, as fastify's listen takes it. */
const host = spec('an IP address or a host name', (raw) =>
  isIP(raw) !== 0 || /^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/.test(raw) ? raw : undefined,
)

const httpUrl: VariableSpec<string> = {
  ...spec('an http:// or https:// URL', (raw) => {
    try {
      const url = new URL(raw)
      return (url.protocol === 'http:' || url.protocol === 'https:') && /^https?:\/\//i.test(raw) ? raw : undefined
    } catch {
      return undefined
    }
  }),
  shown: urlForMessages,
}

/** For services whose key goes in a header: credentials in the URL are refused (fetch refuses them too, quoting the URL). */
const httpUrlWithoutCredentials: VariableSpec<string> = {
  ...spec('an http:// or https:// URL without user:password (the API key goes in AGGREGATOR_API_KEY)', (raw) => {
    const parsed = httpUrl.parse(raw)
    if (parsed === undefined) return undefined
    const url = new URL(parsed)
    return url.username || url.password ? undefined : parsed
  }),
  shown: urlForMessages,
}

/** Resolved against the working directory when relative. */
const anyPath = spec('a path (relative to the working directory unless absolute)', (raw) => (raw.includes('\0') ? undefined : path.resolve(raw)))
const absolutePath = spec('an absolute path', (raw) => (path.isAbsolute(raw) && !raw.includes('\0') ? raw : undefined))
const text = spec('any text', (raw) => raw)
const address = spec('an address (0x followed by 40 hex digits)', (raw) => (/^0x[0-9a-fA-F]{40}$/.test(raw) ? (raw as `0x${string}`) : undefined))
const chainId = spec(`one of ${SUPPORTED_CHAIN_IDS.join(', ')}`, (raw) =>
  /^[0-9]+$/.test(raw) && (SUPPORTED_CHAIN_IDS as readonly number[]).includes(Number(raw)) ? (Number(raw) as ChainId) : undefined,
)
const commaList = (form: string) => spec(form, (raw) => raw.split(',').map((item) => item.trim()).filter((item) => item !== ''))

/** Operator tokens: long enough that guessing is hopeless, and sendable as a bearer header. */
export const MIN_OPERATOR_TOKEN_LENGTH = 32
export const MAX_OPERATOR_TOKEN_LENGTH = 1024
const OPERATOR_TOKEN = new RegExp(`^[\\x21-\\x7e]{${MIN_OPERATOR_TOKEN_LENGTH},${MAX_OPERATOR_TOKEN_LENGTH}}$`)

/** Whether a token has the shape every operator token must have (the single one, and each named operator's). */
export const isOperatorTokenShape = (token: string): boolean => OPERATOR_TOKEN.test(token)

export const MIN_WEBHOOK_SECRET_LENGTH = 16

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export const VARIABLES = {
  // Where things are (all processes)
  SERVICE_DATA_DIR: anyPath,
  SERVICE_SIGNER_SOCKET: absolutePath,
  SERVICE_GRANT_SOCKET: absolutePath,
  SERVICE_APPROVER_SOCKET: absolutePath,
  SERVICE_SOCKET_MODE: oneOf(['0600', '0660']),
  SERVICE_POLICY_FILE: anyPath,
  SERVICE_LOG_LEVEL: oneOf(LOG_LEVELS),
  'SERVICE_V3_ROUTER_{chainId}': address,
  // Gateway
  SERVICE_HOST: host,
  SERVICE_PORT: port,
  'SERVICE_RPC_URL_{chainId}': httpUrl,
  BASE_RPC_URL: httpUrl,
  SERVICE_AGGREGATOR_URL: httpUrlWithoutCredentials,
  SERVICE_SKILLS_DIR: anyPath,
  SERVICE_SKILL_PUBLISHERS: commaList('a comma-separated list of addresses (0x followed by 40 hex digits, EIP-55 checksummed when mixed-case)'),
  SERVICE_SKILL_CONCURRENCY: wholeNumber(1, 32),
  SERVICE_SERVER_TIMING: oneOf(['on', 'off']),
  SERVICE_CHAIN_CHECK_MS: wholeNumber(1000, 3_600_000, 'milliseconds'),
  SERVICE_MAX_CONNECTIONS: wholeNumber(16, 65_536),
  // Approver
  SERVICE_APPROVER_HOST: host,
  SERVICE_APPROVER_PORT: port,
  SERVICE_APPROVAL_MODE: oneOf(['web', 'cli', 'auto']),
  SERVICE_APPROVAL_CHANNELS: commaList('a comma-separated list of web, cli, webhook (or auto alone)'),
  SERVICE_APPROVAL_TTL_MS: wholeNumber(1000, 300_000, 'milliseconds'),
  SERVICE_CLI_APPROVAL_TIMEOUT_MS: wholeNumber(1000, 3_600_000, 'milliseconds'),
  SERVICE_OPERATOR_TOKEN: spec(`${MIN_OPERATOR_TOKEN_LENGTH} to ${MAX_OPERATOR_TOKEN_LENGTH} printable characters without spaces (e.g. openssl rand -base64 32)`, (raw) => (OPERATOR_TOKEN.test(raw) ? raw : undefined), true),
  SERVICE_OPERATORS_FILE: anyPath,
  SERVICE_OPERATOR_AUTH: oneOf(['on', 'off']),
  SERVICE_ALLOW_AUTO_APPROVAL: oneOf(['0', '1']),
  SERVICE_WEBHOOK_URL: httpUrl,
  SERVICE_WEBHOOK_SECRET: spec(`at least ${MIN_WEBHOOK_SECRET_LENGTH} characters (e.g. openssl rand -hex 32)`, (raw) => (raw.length >= MIN_WEBHOOK_SECRET_LENGTH ? raw : undefined), true),
  SERVICE_WEBHOOK_SECRET_FILE: anyPath,
  SERVICE_WEBHOOK_BACKOFF_MS: wholeNumber(100, 9_999_999, 'milliseconds'),
  // Signer
  SERVICE_KEYSTORE_DIR: anyPath,
  SERVICE_SIGNER_DEV_CHAIN_ID: chainId,
  SERVICE_PASSPHRASE_FILE: anyPath,
  SERVICE_DEMO_PASSPHRASE: spec('any text', (raw) => raw, true),
  SERVICE_PKCS11_MODULE: absolutePath,
  SERVICE_PKCS11_TOKEN_LABEL: text,
  SERVICE_PKCS11_PIN_FILE: anyPath,
  SERVICE_PKCS11_SESSIONS: wholeNumber(1, 64),
} as const satisfies Record<string, VariableSpec<unknown>>

export type VariableName = keyof typeof VARIABLES
export type VariableValue<N extends VariableName> = (typeof VARIABLES)[N] extends VariableSpec<infer T> ? T : never
