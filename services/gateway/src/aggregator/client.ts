import type { Address, SwapExactInAction, TxIntent } from '@countersign/shared'

export interface AggregatorConfig {
  apiKey: string | null
  /** The swap API's base URL; the chain id is appended (1inch Swap API v6 layout). */
  baseUrl: string
  timeoutMs: number
}

export class AggregatorUnavailable extends Error {
  override name = 'AggregatorUnavailable'
}

export interface AggregatorQuote {
  to: Address
  data: `0x${string}`
  value: string
  dstAmount: string
}

/**
 * GET {base}/{chainId}/swap — the 1inch Swap API v6 request: src, dst,
 * amount, from, origin, receiver, slippage (percent), with the API key as a
 * bearer token. Any failure (no key, 4xx/5xx including 429, timeout, network,
 * a malformed body) is AggregatorUnavailable: the caller falls back to v3.
 */
export async function fetchAggregatorQuote(config: AggregatorConfig, intent: TxIntent & { action: SwapExactInAction }): Promise<AggregatorQuote> {
  if (!config.apiKey) throw new AggregatorUnavailable('no AGGREGATOR_API_KEY')
  const a = intent.action
  const params = new URLSearchParams({
    src: a.assetIn.address,
    dst: a.assetOut.address,
    amount: a.amountIn,
    from: intent.wallet.address,
    origin: intent.wallet.address,
    receiver: intent.wallet.address,
    slippage: String(Math.max(intent.constraints.maxSlippageBps, 1) / 100),
    disableEstimate: 'true',
  })
  let res: Response
  try {
    res = await fetch(`${config.baseUrl.replace(/\/$/, '')}/${intent.chain.chainId}/swap?${params}`, {
      headers: { authorization: `Bearer ${config.apiKey}`, accept: 'application/json' },
      signal: AbortSignal.timeout(config.timeoutMs),
    })
  } catch (err) {
    throw new AggregatorUnavailable(`aggregator unreachable: ${(err as Error).name === 'TimeoutError' ? `no answer within ${config.timeoutMs} ms` : (err as Error).message}`)
  }
  if (res.status === 429) throw new AggregatorUnavailable('aggregator rate limit (429)')
  if (!res.ok) throw new AggregatorUnavailable(`aggregator answered ${res.status}`)
  const body = (await res.json().catch(() => null)) as { dstAmount?: unknown; tx?: { to?: unknown; data?: unknown; value?: unknown } } | null
  const tx = body?.tx
  if (!tx || typeof tx.to !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(tx.to) || typeof tx.data !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(tx.data)) {
    throw new AggregatorUnavailable('aggregator answer has no usable tx')
  }
  return {
    to: tx.to as Address,
    data: tx.data as `0x${string}`,
    value: typeof tx.value === 'string' && /^[0-9]+$/.test(tx.value) ? tx.value : '0',
    dstAmount: typeof body?.dstAmount === 'string' ? body.dstAmount : '0',
  }
}
