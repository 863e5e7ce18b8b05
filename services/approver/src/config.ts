import path from 'node:path'
import { DEFAULT_CONNECTION_LIMITS } from '@countersign/shared/http/connectionLimits'
import {
  APPROVAL_REQUEST_TTL_MS,
  ConfigError,
  readApproverListen,
  readDataDir,
  readGatewayListen,
  readLogLevel,
  readRpcUrls,
  readVariable,
  VARIABLES,
  type Env,
  type LogLevel,
} from '@countersign/shared'

export { ConfigError }

export type ApprovalMode = 'web' | 'cli' | 'auto'

/** Where a request is presented (DESIGN §6 "approval channels"). */
export type ChannelName = 'web' | 'cli' | 'webhook' | 'auto'
const CHANNEL_NAMES: readonly ChannelName[] = ['web', 'cli', 'webhook', 'auto']

/**
 * SERVICE_APPROVAL_CHANNELS=web,cli,webhook, or the older SERVICE_APPROVAL_MODE
 * as a shorthand (web, cli, auto). The dashboard (web) is on whenever a human
 * decides: a request nobody answered on the terminal stays decidable there,
 * so `cli` means web and cli. `auto` decides by itself and stands alone.
 * A webhook only tells a receiver that a request waits; it cannot decide.
 */
export function parseApprovalChannels(env: Env): ChannelName[] {
  const list = readVariable(env, 'SERVICE_APPROVAL_CHANNELS')
  const mode = readVariable(env, 'SERVICE_APPROVAL_MODE')
  let names: string[]
  if (list && list.length > 0) {
    names = list
    const unknown = names.filter((n) => !(CHANNEL_NAMES as readonly string[]).includes(n))
    if (unknown.length > 0) throw new ConfigError(`SERVICE_APPROVAL_CHANNELS must be ${VARIABLES.SERVICE_APPROVAL_CHANNELS.form}; got "${unknown.join('", "')}"`)
    // Deployments set SERVICE_APPROVAL_MODE=web by default (compose, the env file example): the list wins, unless the two disagree.
    if (mode && mode !== 'web' && !names.includes(mode)) {
      throw new ConfigError(`SERVICE_APPROVAL_MODE=${mode} but SERVICE_APPROVAL_CHANNELS=${list.join(',')} does not include ${mode}; keep one of the two`)
    }
  } else {
    names = [mode ?? 'web']
  }
  if (names.includes('auto')) {
    if (names.some((n) => n !== 'auto')) throw new ConfigError('the auto channel approves everything at once: it cannot be combined with other channels')
    return ['auto']
  }
  return CHANNEL_NAMES.filter((n) => n === 'web' || names.includes(n))
}

export interface ApproverConfig {
  dataDir: string
  runDir: string
  /** SERVICE_APPROVER_HOST (default 127.0.0.1; SERVICE_HOST moves only the gateway). */
  host: string
  port: number
  /** The gateway's port (SERVICE_PORT), for the dashboard address the start message prints. */
  gatewayPort: number
  logLevel: LogLevel
  /** auto, cli (the terminal is one of the channels) or web: the approver's start message and its auto-mode checks. */
  mode: ApprovalMode
  channels: ChannelName[]
  operatorAuth: boolean
  /** SERVICE_OPERATOR_TOKEN, checked for length at start (32 characters at least). */
  operatorToken: string | null
  /** SERVICE_OPERATORS_FILE: named operators with token hashes, replacing the single token. */
  operatorsFile: string | null
  /** SERVICE_POLICY_FILE, the gateway's and the signer's: the approver reads requireQuorumAbove from it. */
  policyFile: string | null
  allowAutoApproval: boolean
  /** RPC URLs configured for any chain (auto mode refuses non-local ones). */
  rpcUrls: Array<{ variable: string; url: string }>
  cliTimeoutMs: number
  /** How long a request waits for an operator (SPEC: 300 s; shorter for tests and demos). */
  requestTtlMs: number
  /**
   * SERVICE_MAX_CONNECTIONS, as the gateway's (default 1024), on each of the
   * approver's listeners: the gateway forwards each client's dashboard and
   * approval calls over a connection of its own, so a lower limit here would
   * refuse what the gateway let in.
   */
  maxConnections: number
}

/** The approver's settings, composed from the shared SERVICE_* readers; any bad value is a ConfigError naming its variable. */
export function loadApproverConfig(env: Env): ApproverConfig {
  const dataDir = readDataDir(env)
  const channels = parseApprovalChannels(env)
  const operatorsFile = readVariable(env, 'SERVICE_OPERATORS_FILE') ?? null
  const operatorToken = readVariable(env, 'SERVICE_OPERATOR_TOKEN') ?? null
  if (operatorsFile && operatorToken) {
    throw new ConfigError('SERVICE_OPERATORS_FILE replaces the single operator token: unset SERVICE_OPERATOR_TOKEN (each operator has their own token)')
  }
  const mode: ApprovalMode = channels.includes('auto') ? 'auto' : channels.includes('cli') ? 'cli' : 'web'
  const listen = readApproverListen(env)
  return {
    dataDir,
    runDir: path.join(dataDir, 'run'),
    host: listen.host,
    port: listen.port,
    gatewayPort: readGatewayListen(env).port,
    logLevel: readLogLevel(env),
    mode,
    channels,
    operatorAuth: readVariable(env, 'SERVICE_OPERATOR_AUTH') !== 'off',
    operatorToken,
    operatorsFile,
    policyFile: readVariable(env, 'SERVICE_POLICY_FILE') ?? null,
    allowAutoApproval: readVariable(env, 'SERVICE_ALLOW_AUTO_APPROVAL') === '1',
    rpcUrls: readRpcUrls(env).map(({ variable, url }) => ({ variable, url })),
    cliTimeoutMs: readVariable(env, 'SERVICE_CLI_APPROVAL_TIMEOUT_MS') ?? 120_000,
    requestTtlMs: readVariable(env, 'SERVICE_APPROVAL_TTL_MS') ?? APPROVAL_REQUEST_TTL_MS,
    maxConnections: readVariable(env, 'SERVICE_MAX_CONNECTIONS') ?? DEFAULT_CONNECTION_LIMITS.maxConnections,
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1'])

export function isLocalUrl(url: string): boolean {
  try {
    return LOOPBACK.has(new URL(url).hostname)
  } catch {
    return false
  }
}
