import path from 'node:path'
import { isAddress } from 'viem'
import {
  ConfigError,
  readDataDir,
  readGatewayListen,
  readLogLevel,
  readRpcUrls,
  readVariable,
  VARIABLES,
  type ChainId,
  type Env,
} from '@countersign/shared'
import { DEFAULT_CONNECTION_LIMITS } from '@countersign/shared/http/connectionLimits'

export { ConfigError }

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
  skillsDir: string
  /** SERVICE_SKILL_PUBLISHERS, lower-cased: publishers whose signature alone authorises a registration. */
  skillPublishers: ReadonlySet<string>
  /** SERVICE_SKILL_CONCURRENCY: skill runs at once (default 2). */
  skillConcurrency: number
  /** SERVICE_CHAIN_CHECK_MS: how often each RPC endpoint is asked its chain id again after start (default 30 s). */
  chainCheckMs: number
  /** SERVICE_MAX_CONNECTIONS: connections held at once (default 1024); one more takes an idle or slow-sending one's place, or is refused 503. */
  maxConnections: number
  /** SERVICE_SERVER_TIMING=on: a Server-Timing header with each request's phases (default off). */
  serverTiming: boolean
  aggregator: { apiKey: string | null; baseUrl: string; timeoutMs: number }
}

/** The gateway's settings, composed from the shared SERVICE_* readers; any bad value is a ConfigError naming its variable. */
export function loadGatewayConfig(env: Env): GatewayConfig {
  const listen = readGatewayListen(env)
  const dataDir = readDataDir(env)
  const rpcUrls: GatewayConfig['rpcUrls'] = {}
  const rpcUrlSources: GatewayConfig['rpcUrlSources'] = {}
  for (const { chainId, url, variable } of readRpcUrls(env)) {
    rpcUrls[chainId] = url
    rpcUrlSources[chainId] = variable
  }
  return {
    host: listen.host,
    port: listen.port,
    dataDir,
    policyFile: readVariable(env, 'SERVICE_POLICY_FILE') ?? null,
    logLevel: readLogLevel(env),
    rpcUrls,
    rpcUrlSources,
    bodyLimitBytes: 64 * 1024,
    skillsDir: readVariable(env, 'SERVICE_SKILLS_DIR') ?? path.join(dataDir, 'skills'),
    skillPublishers: parseSkillPublishers(env.SERVICE_SKILL_PUBLISHERS),
    skillConcurrency: parseSkillConcurrency(env.SERVICE_SKILL_CONCURRENCY),
    chainCheckMs: readVariable(env, 'SERVICE_CHAIN_CHECK_MS') ?? 30_000,
    maxConnections: readVariable(env, 'SERVICE_MAX_CONNECTIONS') ?? DEFAULT_CONNECTION_LIMITS.maxConnections,
    serverTiming: readVariable(env, 'SERVICE_SERVER_TIMING') === 'on',
    aggregator: {
      apiKey: env.AGGREGATOR_API_KEY?.trim() || null,
      baseUrl: readVariable(env, 'SERVICE_AGGREGATOR_URL') ?? 'https://api.1inch.dev/swap/v6.0',
      timeoutMs: 10_000,
    },
  }
}

/** Comma-separated addresses; each must be a valid address (a mixed-case one with a correct EIP-55 checksum). */
export function parseSkillPublishers(raw: string | undefined): ReadonlySet<string> {
  const list = readVariable({ SERVICE_SKILL_PUBLISHERS: raw }, 'SERVICE_SKILL_PUBLISHERS') ?? []
  for (const a of list) {
    if (!isAddress(a, { strict: true })) {
      throw new ConfigError(`SERVICE_SKILL_PUBLISHERS must be ${VARIABLES.SERVICE_SKILL_PUBLISHERS.form}; "${a}" is not one${/^0x[0-9a-fA-F]{40}$/.test(a) ? ' (its mixed case is not a valid EIP-55 checksum)' : ''}`)
    }
  }
  return new Set(list.map((a) => a.toLowerCase()))
}

export function parseSkillConcurrency(raw: string | undefined): number {
  return readVariable({ SERVICE_SKILL_CONCURRENCY: raw }, 'SERVICE_SKILL_CONCURRENCY') ?? 2
}
