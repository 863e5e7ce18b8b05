import path from 'node:path'
import { APPROVAL_REQUEST_TTL_MS, SUPPORTED_CHAIN_IDS } from '@countersign/shared'

export class ConfigError extends Error {
  override name = 'ConfigError'
}

export type ApprovalMode = 'web' | 'cli' | 'auto'

export interface ApproverConfig {
  dataDir: string
  runDir: string
  host: string
  port: number
  mode: ApprovalMode
  operatorAuth: boolean
  operatorToken: string | null
  allowAutoApproval: boolean
  /** RPC URLs configured for any chain (auto mode refuses non-local ones). */
  rpcUrls: Array<{ variable: string; url: string }>
  cliTimeoutMs: number
  /** How long a request waits for an operator (SPEC: 300 s; shorter for tests and demos). */
  requestTtlMs: number
}

export function loadApproverConfig(env: Record<string, string | undefined>): ApproverConfig {
  const dataDir = path.resolve(env.SERVICE_DATA_DIR?.trim() || 'data')
  const mode = (env.SERVICE_APPROVAL_MODE?.trim() || 'web') as ApprovalMode
  if (!['web', 'cli', 'auto'].includes(mode)) throw new ConfigError(`SERVICE_APPROVAL_MODE must be web, cli or auto; got "${mode}"`)
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
    operatorAuth: env.SERVICE_OPERATOR_AUTH?.trim() !== 'off',
    operatorToken: env.SERVICE_OPERATOR_TOKEN?.trim() || null,
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
