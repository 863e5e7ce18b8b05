// Intent helpers: a complete TxIntent from the few fields that matter, with a
// fresh id, the current timestamp and constraints with sane defaults. Pure
// apart from the clock and the id source, both injectable.
import type { Action, Address, Asset, ChainId, SwapProvider, TxIntent } from '@countersign/shared'

/** 0.01 ETH: room for a swap at a few hundred gwei; the signer refuses anything costlier. */
export const DEFAULT_MAX_GAS_WEI = '10000000000000000'
/** 15 minutes: long enough for an operator to decide (approval lifetime 300 s) and the send. */
export const DEFAULT_DEADLINE_SECONDS = 900
/** 0.5 %: a swap's declared slippage tolerance (minAmountOut / maxAmountIn are what binds on chain). */
export const DEFAULT_SWAP_SLIPPAGE_BPS = 50
/** Base: the chain countersign serves when nothing else is configured. */
export const DEFAULT_CHAIN_ID: ChainId = 8453

export type Amount = string | bigint

export interface IntentOptions {
  wallet: Address
  chainId?: ChainId
  /** Upper bound on gas × max fee, in wei. */
  maxGasWei?: Amount
  /** Seconds from now until the intent is void. */
  deadlineSeconds?: number
  maxSlippageBps?: number
  /** Shown to the operator as "client says: …". */
  source?: string
  note?: string
  /** A fixed id (to retry an intent); a fresh UUID otherwise. */
  id?: string
  /** Milliseconds since the epoch; for tests. */
  now?: () => number
}

/** An ERC-20 token: its address, or the full asset object (symbol and decimals are display hints; the service reads the chain's). */
export type TokenRef = Address | Asset

export const asset = (token: TokenRef): Asset => (typeof token === 'string' ? { kind: 'erc20', address: token } : { ...token, kind: 'erc20' })

const amount = (a: Amount, field: string): string => {
  const s = typeof a === 'bigint' ? a.toString() : a
  if (!/^[0-9]+$/.test(s)) throw new TypeError(`${field} must be a whole number of the smallest unit as decimal digits, got ${JSON.stringify(s)}`)
  // The wire format has no leading zeros.
  return BigInt(s).toString()
}

/** A TxIntent for any action, with defaults filled in. */
export function intentFor(action: Action, o: IntentOptions): TxIntent {
  const nowMs = (o.now ?? Date.now)()
  const nowSeconds = Math.floor(nowMs / 1000)
  const isSwap = action.type === 'swap_exact_in' || action.type === 'swap_exact_out'
  const metadata = o.source !== undefined || o.note !== undefined ? { metadata: { ...(o.source !== undefined ? { source: o.source } : {}), ...(o.note !== undefined ? { note: o.note } : {}) } } : {}
  return {
    version: '1',
    id: o.id ?? globalThis.crypto.randomUUID(),
    timestamp: nowSeconds,
    chain: { type: 'evm', chainId: o.chainId ?? DEFAULT_CHAIN_ID },
    wallet: { address: o.wallet },
    action,
    constraints: {
      maxGasWei: amount(o.maxGasWei ?? DEFAULT_MAX_GAS_WEI, 'maxGasWei'),
      deadline: nowSeconds + (o.deadlineSeconds ?? DEFAULT_DEADLINE_SECONDS),
      maxSlippageBps: o.maxSlippageBps ?? (isSwap ? DEFAULT_SWAP_SLIPPAGE_BPS : 0),
    },
    ...metadata,
  }
}

/** ERC-20 transfer of `amount` (smallest unit) to `to`. */
export function transfer(o: IntentOptions & { token: TokenRef; to: Address; amount: Amount }): TxIntent {
  return intentFor({ type: 'transfer', asset: asset(o.token), to: o.to, amount: amount(o.amount, 'amount') }, o)
}

/** Transfer of the chain's native currency; `amount` in wei. */
export function transferNative(o: IntentOptions & { to: Address; amount: Amount }): TxIntent {
  return intentFor({ type: 'transfer_native', to: o.to, amount: amount(o.amount, 'amount') }, o)
}

/** ERC-20 allowance of `amount` (smallest unit) for `spender`. */
export function approve(o: IntentOptions & { token: TokenRef; spender: Address; amount: Amount }): TxIntent {
  return intentFor({ type: 'approve', asset: asset(o.token), spender: o.spender, amount: amount(o.amount, 'amount') }, o)
}

interface SwapOptions extends IntentOptions {
  router: Address
  tokenIn: TokenRef
  tokenOut: TokenRef
  provider?: SwapProvider
}

/** Sell exactly `amountIn` of tokenIn for at least `minAmountOut` of tokenOut. */
export function swapExactIn(o: SwapOptions & { amountIn: Amount; minAmountOut: Amount }): TxIntent {
  return intentFor(
    {
      type: 'swap_exact_in',
      router: o.router,
      ...(o.provider ? { provider: o.provider } : {}),
      assetIn: asset(o.tokenIn),
      assetOut: asset(o.tokenOut),
      amountIn: amount(o.amountIn, 'amountIn'),
      minAmountOut: amount(o.minAmountOut, 'minAmountOut'),
    },
    o,
  )
}

/** Buy exactly `amountOut` of tokenOut for at most `maxAmountIn` of tokenIn. */
export function swapExactOut(o: SwapOptions & { amountOut: Amount; maxAmountIn: Amount }): TxIntent {
  return intentFor(
    {
      type: 'swap_exact_out',
      router: o.router,
      ...(o.provider ? { provider: o.provider } : {}),
      assetIn: asset(o.tokenIn),
      assetOut: asset(o.tokenOut),
      amountOut: amount(o.amountOut, 'amountOut'),
      maxAmountIn: amount(o.maxAmountIn, 'maxAmountIn'),
    },
    o,
  )
}
