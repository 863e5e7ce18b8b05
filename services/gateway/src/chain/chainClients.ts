import { createPublicClient, defineChain, http, type PublicClient } from 'viem'
import { chainText } from './chainText.js'
import type { ChainId } from '@countersign/shared'
import { simpleErrorBody } from '@countersign/shared/http/errorBodies'
import { HttpError } from '@countersign/shared/http/errors'
import { ConfigError } from '../config.js'
import { createKeepAliveFetch, type SlowRpcCall } from './keepAliveFetch.js'

export interface ChainClient {
  chainId: ChainId
  client: PublicClient
  url: string
}

export interface ChainClients {
  configured(): ChainId[]
  /** The client for a chain, or a 502 no_rpc_client naming it. */
  get(chainId: number): ChainClient
  has(chainId: number): boolean
}

export function createChainClients(rpcUrls: Partial<Record<ChainId, string>>, opts: { timeoutMs?: number; onSlowCall?: (report: SlowRpcCall) => void } = {}): ChainClients {
  const clients = new Map<number, ChainClient>()
  // JSON-RPC over node:http keep-alive sockets instead of the global fetch (see keepAliveFetch.ts).
  const fetchFn = createKeepAliveFetch(opts.onSlowCall ? { onSlowCall: opts.onSlowCall } : {}) as unknown as typeof fetch
  for (const [id, url] of Object.entries(rpcUrls) as Array<[string, string]>) {
    const chainId = Number(id) as ChainId
    const chain = defineChain({
      id: chainId,
      name: `chain ${chainId}`,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [url] } },
    })
    const client = createPublicClient({
      chain,
      transport: http(url, { timeout: opts.timeoutMs ?? 10_000, retryCount: 1, fetchFn }),
      cacheTime: 0,
    }) as PublicClient
    clients.set(chainId, { chainId, client, url })
  }
  return {
    configured: () => [...clients.keys()] as ChainId[],
    has: (chainId) => clients.has(chainId),
    get(chainId) {
      const c = clients.get(chainId)
      if (!c) {
        throw new HttpError(502, simpleErrorBody('no_rpc_client', `no RPC endpoint is configured for chain ${chainId}; set SERVICE_RPC_URL_${chainId}`))
      }
      return c
    },
  }
}

/** At start: each endpoint must answer eth_chainId with the chain it is configured for. */
export async function verifyChainIds(clients: ChainClients, sources: Partial<Record<ChainId, string>>): Promise<void> {
  await Promise.all(
    clients.configured().map(async (chainId) => {
      const variable = sources[chainId] ?? `SERVICE_RPC_URL_${chainId}`
      let actual: number
      try {
        actual = await clients.get(chainId).client.getChainId()
      } catch (err) {
        throw new ConfigError(`${variable}: the RPC endpoint did not answer eth_chainId (${rpcMessage(err)})`)
      }
      if (actual !== chainId) {
        throw new ConfigError(`${variable} points at chain ${actual}, but it is configured for chain ${chainId}`)
      }
    }),
  )
}

/** A provider failure as the client sees it: 502 rpc_error with the provider's message. */
export function rpcFailure(err: unknown, chainId: number): HttpError {
  return new HttpError(502, simpleErrorBody('rpc_error', `chain ${chainId}: ${rpcMessage(err)}`))
}

export function rpcMessage(err: unknown): string {
  const e = err as { shortMessage?: string; details?: string; message?: string }
  const base = e?.shortMessage ?? e?.message ?? String(err)
  // A node's message quotes revert strings, which contracts choose.
  return chainText(e?.details && !base.includes(e.details) ? `${base} (${e.details})` : base)
}
