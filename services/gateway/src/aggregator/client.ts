import { MAX_TX_DATA_HEX, type Address, type SwapExactInAction, type TxIntent } from '@countersign/shared'
import { readAtMost } from '@countersign/shared/http/readAtMost'

export interface AggregatorConfig {
  apiKey: string | null
  /** The swap API's base URL; the chain id is appended (1inch Swap API v6 layout). */
  baseUrl: string
  timeoutMs: number
}

export class AggregatorUnavailable extends Error {
  override name = 'AggregatorUnavailable'
}

/** A swap answer is a few kilobytes: anything larger is not one, and is not read into memory. */
export const MAX_AGGREGATOR_ANSWER_BYTES = 256 * 1024

export interface AggregatorQuote {
  to: Address
  data: `0x${string}`
  value: string
  dstAmount: string
}

/**
 * GET {base}/{chainId}/swap — the 1inch Swap API v6 request: src, dst,
 * amount, from, origin, receiver, slippage (percent, `slippageBps`), with the API key as a
 * bearer token. Any failure (no key, 4xx/5xx including 429, timeout, network,
 * a redirect, a body over MAX_AGGREGATOR_ANSWER_BYTES or malformed) is
 * AggregatorUnavailable: the caller falls back to v3. Redirects are not
 * followed: the key goes to the configured host and nowhere else.
 */
export async function fetchAggregatorQuote(config: AggregatorConfig, intent: TxIntent & { action: SwapExactInAction }, slippageBps: number): Promise<AggregatorQuote> {
  if (!config.apiKey) throw new AggregatorUnavailable('no AGGREGATOR_API_KEY')
  const a = intent.action
  const params = new URLSearchParams({
    src: a.assetIn.address,
    dst: a.assetOut.address,
    amount: a.amountIn,
    from: intent.wallet.address,
    origin: intent.wallet.address,
    receiver: intent.wallet.address,
    // The slippage the price guard holds the quote to (the intent's, at most the policy's): asked with more,
    // an honest quote's minimum fell below the guard's floor and was refused every time (second review).
    slippage: String(Math.max(slippageBps, 1) / 100),
    disableEstimate: 'true',
  })
  let res: Response
  try {
    res = await fetch(`${config.baseUrl.replace(/\/$/, '')}/${intent.chain.chainId}/swap?${params}`, {
      headers: { authorization: `Bearer ${config.apiKey}`, accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(config.timeoutMs),
    })
  } catch (err) {
    throw new AggregatorUnavailable(`aggregator unreachable: ${describeFetchError(err, config.timeoutMs)}`)
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined)
    throw new AggregatorUnavailable(res.status === 429 ? 'aggregator rate limit (429)' : `aggregator answered ${res.status}`)
  }
  let body: { dstAmount?: unknown; tx?: { to?: unknown; data?: unknown; value?: unknown } } | null
  try {
    const text = await readAtMost(res, MAX_AGGREGATOR_ANSWER_BYTES)
    if (text === null) throw new AggregatorUnavailable(`aggregator answer larger than ${MAX_AGGREGATOR_ANSWER_BYTES} bytes`)
    body = JSON.parse(text) as typeof body
  } catch (err) {
    if (err instanceof AggregatorUnavailable) throw err
    if ((err as Error).name === 'TimeoutError') throw new AggregatorUnavailable(`aggregator unreachable: ${describeFetchError(err, config.timeoutMs)}`)
    body = null
  }
  const tx = body?.tx
  if (!tx || typeof tx.to !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(tx.to) || typeof tx.data !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(tx.data)) {
    throw new AggregatorUnavailable('aggregator answer has no usable tx')
  }
  // Longer calldata than a transaction request may carry: the approver and the signer would refuse it later.
  if (tx.data.length > MAX_TX_DATA_HEX) throw new AggregatorUnavailable(`aggregator calldata is ${tx.data.length} hex characters, more than the ${MAX_TX_DATA_HEX} a transaction request may carry`)
  return {
    to: tx.to as Address,
    data: tx.data as `0x${string}`,
    value: typeof tx.value === 'string' && /^[0-9]+$/.test(tx.value) ? tx.value : '0',
    dstAmount: typeof body?.dstAmount === 'string' ? body.dstAmount : '0',
  }
}

/**
 * In words that never quote the request's URL: fetch's own messages can (a
 * URL it refuses is named whole, credentials and all), and this text reaches
 * the build's description, the log and the audit log.
 */
function describeFetchError(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { message?: string } }
  if (e.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`
  // The cause is the socket's error (ECONNREFUSED 127.0.0.1:9, ENOTFOUND host): a host, never a path.
  return e.cause?.message ? `fetch failed (${e.cause.message})` : `the request could not be made (${e.name})`
}
