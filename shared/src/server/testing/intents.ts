// Intent factories for tests in every package. Not exported from the package
// root so production code cannot pick them up by accident.
import { randomUUID } from 'node:crypto'
import type { Action, Address, ApproveAction, ChainId, SwapExactInAction, SwapExactOutAction, TransferAction, TransferNativeAction, TxIntent } from '../../types.js'

export const WALLET: Address = '0x1111111111111111111111111111111111111111'
export const RECIPIENT: Address = '0x2222222222222222222222222222222222222222'
export const USDC_BASE: Address = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
export const WETH_BASE: Address = '0x4200000000000000000000000000000000000006'
export const ROUTER_BASE: Address = '0x2626664c2603336E57B271c5C0b26F421741e481'

export interface IntentOverrides {
  id?: string
  chainId?: ChainId
  wallet?: Address
  action?: Action
  nowMs?: number
  deadline?: number
  maxGasWei?: string
}

export function makeIntent(o: IntentOverrides = {}): TxIntent {
  const nowMs = o.nowMs ?? Date.now()
  return {
    version: '1',
    id: o.id ?? randomUUID(),
    timestamp: Math.floor(nowMs / 1000),
    chain: { type: 'evm', chainId: o.chainId ?? 8453 },
    wallet: { address: o.wallet ?? WALLET },
    action: o.action ?? {
      type: 'transfer',
      asset: { kind: 'erc20', address: USDC_BASE, symbol: 'USDC', decimals: 6 },
      to: RECIPIENT,
      amount: '5000000',
    },
    constraints: {
      maxGasWei: o.maxGasWei ?? '1000000000000000',
      deadline: o.deadline ?? Math.floor(nowMs / 1000) + 600,
      maxSlippageBps: 0,
    },
  }
}

export const actions = {
  transfer: (amount = '5000000'): TransferAction => ({
    type: 'transfer',
    asset: { kind: 'erc20', address: USDC_BASE, symbol: 'USDC', decimals: 6 },
    to: RECIPIENT,
    amount,
  }),
  native: (amount = '1000000000000000'): TransferNativeAction => ({ type: 'transfer_native', to: RECIPIENT, amount }),
  approve: (amount = '1000000'): ApproveAction => ({
    type: 'approve',
    asset: { kind: 'erc20', address: USDC_BASE, symbol: 'USDC', decimals: 6 },
    spender: ROUTER_BASE,
    amount,
  }),
  swapIn: (): SwapExactInAction => ({
    type: 'swap_exact_in',
    router: ROUTER_BASE,
    assetIn: { kind: 'erc20', address: USDC_BASE, symbol: 'USDC', decimals: 6 },
    assetOut: { kind: 'erc20', address: WETH_BASE, symbol: 'WETH', decimals: 18 },
    amountIn: '1000000',
    minAmountOut: '1',
  }),
  swapOut: (): SwapExactOutAction => ({
    type: 'swap_exact_out',
    router: ROUTER_BASE,
    assetIn: { kind: 'erc20', address: USDC_BASE, symbol: 'USDC', decimals: 6 },
    assetOut: { kind: 'erc20', address: WETH_BASE, symbol: 'WETH', decimals: 18 },
    amountOut: '1000000000000',
    maxAmountIn: '5000000',
  }),
}
