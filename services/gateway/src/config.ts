import path from 'node:path'
import { SUPPORTED_CHAIN_IDS, type ChainId } from '@countersign/shared'

/** Raised for configuration a operator must fix; main prints it and exits 1. */
export class ConfigError extends Error {}

export interface GatewayConfig {
  host: string
  port: number
  dataDir: string
  policyFile: string | null
  logLevel: string
  /** RPC endpoint per chain; only configured chains appear. */
  rpcUrls: Partial<Record<ChainId, string>>
  /** Which variable each RPC URL came from, so errors can name it. */
  rpcUrlSources: Partial<Record<ChainId, string>>
  bodyLimitBytes: number
  approverUrl: string
  skillsDir: string
  operatorAuth: boolean
  aggregator: { apiKey: string | null; baseUrl: string; timeoutMs: number }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** Legacy variable that serves chain 8453 when SERVICE_RPC_URL_8453 is unset (DESIGN.md §3). */
export const LEGACY_BASE_RPC_VAR = 'BASE_RPC_URL'

export function loadGatewayConfig(env: Record<string, string | undefined>): GatewayConfig {
  const port = parsePort(env.SERVICE_PORT ?? '3100')
  const host = nonEmpty(env.SERVICE_HOST) ?? '127.0.0.1'
  const logLevel = nonEmpty(env.SERVICE_LOG_LEVEL) ?? 'info'
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`SERVICE_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got "${logLevel}"`)
  }
  const rpcUrls: GatewayConfig['rpcUrls'] = {}
  const rpcUrlSources: GatewayConfig['rpcUrlSources'] = {}
  for (const chainId of SUPPORTED_CHAIN_IDS) {
    let variable = `SERVICE_RPC_URL_${chainId}`
    let url = nonEmpty(env[variable])
    if (!url && chainId === 8453 && nonEmpty(env[LEGACY_BASE_RPC_VAR])) {
      variable = LEGACY_BASE_RPC_VAR
      url = nonEmpty(env[LEGACY_BASE_RPC_VAR])
    }
    if (!url) continue
    if (!/^https?:\/\//i.test(url)) throw new ConfigError(`${variable} must be an http(s) URL; got "${url}"`)
    rpcUrls[chainId] = url
    rpcUrlSources[chainId] = variable
  }
  return {
    host,
    port,
    dataDir: path.resolve(nonEmpty(env.SERVICE_DATA_DIR) ?? 'data'),
    policyFile: nonEmpty(env.SERVICE_POLICY_FILE) ?? null,
    logLevel,
    rpcUrls,
    rpcUrlSources,
    bodyLimitBytes: 64 * 1024,
    skillsDir: path.resolve(nonEmpty(env.SERVICE_SKILLS_DIR) ?? path.join(nonEmpty(env.SERVICE_DATA_DIR) ?? 'data', 'skills')),
    operatorAuth: nonEmpty(env.SERVICE_OPERATOR_AUTH) !== 'off',
    approverUrl: `http://127.0.0.1:${parsePort(env.SERVICE_APPROVER_PORT?.trim() || '3101')}`,
    aggregator: {
      apiKey: nonEmpty(env.AGGREGATOR_API_KEY) ?? null,
      baseUrl: nonEmpty(env.SERVICE_AGGREGATOR_URL) ?? 'https://api.1inch.dev/swap/v6.0',
      timeoutMs: 10_000,
    },
  }
}

function parsePort(raw: string): number {
  const port = Number(raw)
  if (!/^[0-9]{1,5}$/.test(raw) || port > 65535) throw new ConfigError(`SERVICE_PORT must be a port number 0..65535; got "${raw}"`)
  return port
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim()
}
