import path from 'node:path'
import { APPROVAL_REQUEST_TTL_MS, SUPPORTED_CHAIN_IDS } from '@countersign/shared'

export class ConfigError extends Error {
  override name = 'ConfigError'
}

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
export function parseApprovalChannels(env: Record<string, string | undefined>): ChannelName[] {
  const list = env.SERVICE_APPROVAL_CHANNELS?.trim()
  const mode = env.SERVICE_APPROVAL_MODE?.trim()
  let names: string[]
  if (list) {
    names = list.split(',').map((n) => n.trim())
    const unknown = names.filter((n) => !(CHANNEL_NAMES as readonly string[]).includes(n))
    if (unknown.length > 0) throw new ConfigError(`SERVICE_APPROVAL_CHANNELS lists ${CHANNEL_NAMES.join(', ')}; got "${unknown.join('", "')}"`)
    // Deployments set SERVICE_APPROVAL_MODE=web by default (compose, the env file example): the list wins, unless the two disagree.
    if (mode && mode !== 'web' && !names.includes(mode)) {
      throw new ConfigError(`SERVICE_APPROVAL_MODE=${mode} but SERVICE_APPROVAL_CHANNELS=${list} does not include ${mode}; keep one of the two`)
    }
  } else {
    const m = mode || 'web'
    if (!['web', 'cli', 'auto'].includes(m)) throw new ConfigError(`SERVICE_APPROVAL_MODE must be web, cli or auto; got "${m}"`)
    names = [m]
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
  host: string
  port: number
  /** auto, cli (the terminal is one of the channels) or web: the approver's start message and its auto-mode checks. */
  mode: ApprovalMode
  channels: ChannelName[]
  operatorAuth: boolean
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
}

export function loadApproverConfig(env: Record<string, string | undefined>): ApproverConfig {
  const dataDir = path.resolve(env.SERVICE_DATA_DIR?.trim() || 'data')
  const channels = parseApprovalChannels(env)
  if (env.SERVICE_OPERATORS_FILE?.trim() && env.SERVICE_OPERATOR_TOKEN?.trim()) {
    throw new ConfigError('SERVICE_OPERATORS_FILE replaces the single operator token: unset SERVICE_OPERATOR_TOKEN (each operator has their own token)')
  }
  const mode: ApprovalMode = channels.includes('auto') ? 'auto' : channels.includes('cli') ? 'cli' : 'web'
  const portRaw = env.SERVICE_APPROVER_PORT?.trim() || '3101'
  if (!/^[0-9]{1,5}$/.test(portRaw) || Number(portRaw) > 65535) throw new ConfigError(`SERVICE_APPROVER_PORT must be a port number; got "${portRaw}"`)
  const rpcUrls: ApproverConfig['rpcUrls'] = []
  for (const id of SUPPORTED_CHAIN_IDS) {
    const v = env[`SERVICE_RPC_URL_${id}`]?.trim()
    if (v) rpcUrls.push({ variable: `SERVICE_RPC_URL_${id}`, url: v })
  }
  if (env.BASE_RPC_URL?.trim()) rpcUrls.push({ variable: 'BASE_RPC_URL', url: env.BASE_RPC_URL.trim() })
  const ttlRaw = env.SERVICE_APPROVAL_TTL_MS?.trim() || String(APPROVAL_REQUEST_TTL_MS)
  if (!/^[0-9]{1,7}$/.test(ttlRaw) || Number(ttlRaw) < 1000 || Number(ttlRaw) > APPROVAL_REQUEST_TTL_MS) {
    throw new ConfigError(`SERVICE_APPROVAL_TTL_MS must be 1000 to ${APPROVAL_REQUEST_TTL_MS} (ms); got "${ttlRaw}"`)
  }
  return {
    dataDir,
    runDir: path.join(dataDir, 'run'),
    host: env.SERVICE_HOST?.trim() || '127.0.0.1',
    port: Number(portRaw),
    mode,
    channels,
    operatorAuth: env.SERVICE_OPERATOR_AUTH?.trim() !== 'off',
    operatorToken: env.SERVICE_OPERATOR_TOKEN?.trim() || null,
    operatorsFile: env.SERVICE_OPERATORS_FILE?.trim() ? path.resolve(env.SERVICE_OPERATORS_FILE.trim()) : null,
    policyFile: env.SERVICE_POLICY_FILE?.trim() || null,
    allowAutoApproval: env.SERVICE_ALLOW_AUTO_APPROVAL?.trim() === '1',
    rpcUrls,
    cliTimeoutMs: Number(env.SERVICE_CLI_APPROVAL_TIMEOUT_MS?.trim() || 120_000),
    requestTtlMs: Number(ttlRaw),
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
