import path from 'node:path'
import { isAddress } from 'viem'
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
  /** SERVICE_SKILL_PUBLISHERS, lower-cased: publishers whose signature alone authorises a registration. */
  skillPublishers: ReadonlySet<string>
  /** SERVICE_SKILL_CONCURRENCY: skill runs at once (default 2). */
  skillConcurrency: number
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
    skillPublishers: parseSkillPublishers(env.SERVICE_SKILL_PUBLISHERS),
    skillConcurrency: parseSkillConcurrency(env.SERVICE_SKILL_CONCURRENCY),
    approverUrl: `http://127.0.0.1:${parsePort(env.SERVICE_APPROVER_PORT?.trim() || '3101')}`,
    aggregator: {
      apiKey: nonEmpty(env.AGGREGATOR_API_KEY) ?? null,
      baseUrl: nonEmpty(env.SERVICE_AGGREGATOR_URL) ?? 'https://api.1inch.dev/swap/v6.0',
      timeoutMs: 10_000,
    },
  }
}

/** Comma-separated addresses; each must be a valid address (a mixed-case one with a correct EIP-55 checksum). */
export function parseSkillPublishers(raw: string | undefined): ReadonlySet<string> {
  const list = (raw ?? '').split(',').map((a) => a.trim()).filter((a) => a !== '')
  for (const a of list) {
    if (!isAddress(a, { strict: true })) {
      throw new ConfigError(`SERVICE_SKILL_PUBLISHERS must be a comma-separated list of 0x-prefixed 20-byte addresses; "${a}" is not one${/^0x[0-9a-fA-F]{40}$/.test(a) ? ' (its mixed case is not a valid EIP-55 checksum)' : ''}`)
    }
  }
  return new Set(list.map((a) => a.toLowerCase()))
}

export const MAX_SKILL_CONCURRENCY = 32

export function parseSkillConcurrency(raw: string | undefined): number {
  const v = nonEmpty(raw) ?? '2'
  const n = Number(v)
  if (!/^[0-9]{1,3}$/.test(v) || n < 1 || n > MAX_SKILL_CONCURRENCY) {
    throw new ConfigError(`SERVICE_SKILL_CONCURRENCY must be a whole number from 1 to ${MAX_SKILL_CONCURRENCY}; got "${v}"`)
  }
  return n
}

function parsePort(raw: string): number {
  const port = Number(raw)
  if (!/^[0-9]{1,5}$/.test(raw) || port > 65535) throw new ConfigError(`SERVICE_PORT must be a port number 0..65535; got "${raw}"`)
  return port
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim()
}
