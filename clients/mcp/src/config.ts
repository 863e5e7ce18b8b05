// The MCP server's configuration, from its environment (an MCP host passes
// `env` in its server entry). Read once at start; a bad value stops the
// server with one line naming it, before any tool is offered.
import type { Address, ChainId } from '@countersign/client'
import { DEFAULT_CHAIN_ID, DEFAULT_URL, serviceUrlProblem, urlWithoutCredentials } from '@countersign/client'

export interface McpConfig {
  /** COUNTERSIGN_URL: the gateway's base URL. */
  url: string
  /** COUNTERSIGN_WALLET: the wallet tools act for when the call names none. */
  wallet: Address | undefined
  /** COUNTERSIGN_CHAIN_ID: the chain tools use when the call names none. */
  chainId: ChainId
  /** COUNTERSIGN_V3_ROUTER_<chainId>: swap router per chain (a local deployment); the canonical SwapRouter02 otherwise. */
  routers: Partial<Record<ChainId, Address>>
  /** COUNTERSIGN_MAX_GAS_WEI: the intents' maxGasWei; the client's default otherwise. */
  maxGasWei: string | undefined
  /** COUNTERSIGN_SEND_TIMEOUT_MS: how long one sign-and-send call waits; the client's default (120 s) otherwise. */
  sendTimeoutMs: number | undefined
}

export const CHAIN_IDS: readonly ChainId[] = [1, 10, 42161, 8453]
const ADDRESS = /^0x[0-9a-fA-F]{40}$/

export class ConfigError extends Error {}

export function configFromEnv(env: Record<string, string | undefined>): McpConfig {
  const get = (name: string) => {
    const v = env[name]?.trim()
    return v ? v : undefined
  }
  const url = get('COUNTERSIGN_URL') ?? DEFAULT_URL
  // Credentials are refused first, so no message (and not the start line, which prints the URL) ever repeats them.
  const urlProblem = serviceUrlProblem(url)
  if (urlProblem) throw new ConfigError(`COUNTERSIGN_URL ${urlProblem}`)
  try {
    const u = new URL(url)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)')
  } catch {
    const shown = urlWithoutCredentials(url)
    throw new ConfigError(`COUNTERSIGN_URL must be an http(s) URL such as ${DEFAULT_URL}; got ${shown === url ? `"${url}"` : shown}`)
  }
  const wallet = get('COUNTERSIGN_WALLET')
  if (wallet !== undefined && !ADDRESS.test(wallet)) throw new ConfigError(`COUNTERSIGN_WALLET must be an address (0x + 40 hex); got "${wallet}"`)
  const chainRaw = get('COUNTERSIGN_CHAIN_ID')
  const chainId = chainRaw === undefined ? DEFAULT_CHAIN_ID : (Number(chainRaw) as ChainId)
  if (!CHAIN_IDS.includes(chainId)) throw new ConfigError(`COUNTERSIGN_CHAIN_ID must be one of ${CHAIN_IDS.join(', ')}; got "${chainRaw}"`)
  const routers: Partial<Record<ChainId, Address>> = {}
  for (const id of CHAIN_IDS) {
    const r = get(`COUNTERSIGN_V3_ROUTER_${id}`)
    if (r === undefined) continue
    if (!ADDRESS.test(r)) throw new ConfigError(`COUNTERSIGN_V3_ROUTER_${id} must be an address (0x + 40 hex); got "${r}"`)
    routers[id] = r as Address
  }
  const maxGasWei = get('COUNTERSIGN_MAX_GAS_WEI')
  if (maxGasWei !== undefined && !/^[0-9]+$/.test(maxGasWei)) throw new ConfigError(`COUNTERSIGN_MAX_GAS_WEI must be a whole number of wei; got "${maxGasWei}"`)
  const sendTimeout = get('COUNTERSIGN_SEND_TIMEOUT_MS')
  if (sendTimeout !== undefined && !/^[1-9][0-9]{0,8}$/.test(sendTimeout)) throw new ConfigError(`COUNTERSIGN_SEND_TIMEOUT_MS must be a whole number of milliseconds (1 to 999999999); got "${sendTimeout}"`)
  const sendTimeoutMs = sendTimeout === undefined ? undefined : Number(sendTimeout)
  return { url: url.replace(/\/+$/, ''), wallet: wallet as Address | undefined, chainId, routers, maxGasWei, sendTimeoutMs }
}
