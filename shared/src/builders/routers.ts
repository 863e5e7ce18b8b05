import type { Address } from '../types.js'
import { SUPPORTED_CHAIN_IDS } from '../types.js'
import { readVariable, type Env } from '../config/read.js'

export interface RouterTable {
  /** Uniswap SwapRouter02 per chain id. */
  v3: Record<number, Address>
  /** The aggregator's router, the same address on all four chains. */
  aggregator: Address
}

const SWAP_ROUTER_02: Address = '0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45'
const SWAP_ROUTER_02_BASE: Address = '0x2626664c2603336E57B271c5C0b26F421741e481'
export const AGGREGATOR_ROUTER: Address = '0x111111125421cA6dc452d289314280a0f8842A65'

export function defaultRouterTable(): RouterTable {
  return {
    v3: { 1: SWAP_ROUTER_02, 10: SWAP_ROUTER_02, 42161: SWAP_ROUTER_02, 8453: SWAP_ROUTER_02_BASE },
    aggregator: AGGREGATOR_ROUTER,
  }
}

/** Defaults, with `SERVICE_V3_ROUTER_{chainId}` overriding a chain's v3 router (local deployments). */
export function routerTableFromEnv(env: Env): RouterTable {
  const table = defaultRouterTable()
  for (const chainId of SUPPORTED_CHAIN_IDS) {
    const value = readVariable(env, 'SERVICE_V3_ROUTER_{chainId}', `SERVICE_V3_ROUTER_${chainId}`)
    if (value) table.v3[chainId] = value
  }
  return table
}

export const sameAddress = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase()
