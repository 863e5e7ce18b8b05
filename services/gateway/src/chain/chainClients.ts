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
  /** The client for a chain, or a 502 no_rpc_client naming it; a 502 rpc_error while its endpoint answers another chain id (watchChainIds). */
  get(chainId: number): ChainClient
  has(chainId: number): boolean
  /** The chain's client whatever its endpoint answers now (watchChainIds keeps asking a refused one). */
  unchecked(chainId: number): ChainClient | undefined
  /** What watchChainIds found: the chain id the endpoint answers now (null: the right one again). */
  markAnswering(chainId: number, wrong: number | null): void
  /** Called once each time a chain's endpoint is found answering another chain id (caches of its facts are dropped). */
  onWrongChain(listener: (chainId: number) => void): void
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
  // Chains whose endpoint was last found answering another chain id, with that id.
  const wrongChain = new Map<number, number>()
  const wrongChainListeners: Array<(chainId: number) => void> = []
  return {
    configured: () => [...clients.keys()] as ChainId[],
    has: (chainId) => clients.has(chainId),
    get(chainId) {
      const c = clients.get(chainId)
      if (!c) {
        throw new HttpError(502, simpleErrorBody('no_rpc_client', `no RPC endpoint is configured for chain ${chainId}; set SERVICE_RPC_URL_${chainId}`))
      }
      const answering = wrongChain.get(chainId)
      if (answering !== undefined) {
        throw new HttpError(
          502,
          simpleErrorBody('rpc_error', `chain ${chainId}: its RPC endpoint now answers for chain ${answering}; nothing is read from or sent to it until it answers for chain ${chainId} again`),
        )
      }
      return c
    },
    unchecked: (chainId) => clients.get(chainId),
    markAnswering(chainId, wrong) {
      if (wrong === null || wrong === chainId) {
        wrongChain.delete(chainId)
        return
      }
      const first = !wrongChain.has(chainId)
      wrongChain.set(chainId, wrong)
      if (first) for (const listener of wrongChainListeners) listener(chainId)
    },
    onWrongChain(listener) {
      wrongChainListeners.push(listener)
    },
  }
}

/**
 * After start, each endpoint is asked its chain id again every `intervalMs`:
 * one that changes chain (a provider's misrouting, an operator's mistake, a
 * load balancer) would otherwise give descriptions, simulations, balances and
 * cached token facts of another chain under this one's name, until a
 * restart (found by review). A chain found so is refused (502) until its
 * endpoint answers the right id again; a check the node does not answer
 * changes nothing. Returns a function that stops the checks.
 */
export function watchChainIds(clients: ChainClients, opts: { intervalMs: number; onChange?: (chainId: number, answering: number | null) => void }): () => void {
  const last = new Map<number, number | null>()
  let running = false
  const check = async () => {
    if (running) return
    running = true
    try {
      await Promise.all(
        clients.configured().map(async (chainId) => {
          let actual: number
          try {
            actual = await clients.unchecked(chainId)!.client.getChainId()
          } catch {
            return
          }
          const wrong = actual === chainId ? null : actual
          clients.markAnswering(chainId, wrong)
          if ((last.get(chainId) ?? null) !== wrong) opts.onChange?.(chainId, wrong)
          last.set(chainId, wrong)
        }),
      )
    } finally {
      running = false
    }
  }
  const timer = setInterval(() => void check(), opts.intervalMs)
  timer.unref()
  return () => clearInterval(timer)
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
