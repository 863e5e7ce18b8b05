import { createAjv, txIntentSchema } from '@countersign/shared'
import { describe, expect, it } from 'vitest'
import { approve, swapExactIn, swapExactOut, transfer, transferNative } from './intents.js'

const validate = createAjv({ allErrors: true }).compile(txIntentSchema)
const WALLET = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
const BOB = '0x000000000000000000000000000000000000b0b0'
const TOKEN = '0x1111111111111111111111111111111111111111'
const ROUTER = '0x2626664c2603336E57B271c5C0b26F421741e481'
const now = () => 1_760_000_000_123

describe('intent helpers', () => {
  const made = {
    transfer: transfer({ wallet: WALLET, token: { kind: 'erc20', address: TOKEN, symbol: 'TUSD', decimals: 6 }, to: BOB, amount: 1_500_000n, now }),
    transferNative: transferNative({ wallet: WALLET, to: BOB, amount: '500000000000000000', now }),
    approve: approve({ wallet: WALLET, token: TOKEN, spender: ROUTER, amount: '1000000', now }),
    swapExactIn: swapExactIn({ wallet: WALLET, router: ROUTER, tokenIn: TOKEN, tokenOut: BOB, amountIn: '100', minAmountOut: '90', now }),
    swapExactOut: swapExactOut({ wallet: WALLET, router: ROUTER, tokenIn: TOKEN, tokenOut: BOB, amountOut: '100', maxAmountIn: '110', provider: 'v3_router', now }),
  }

  it.each(Object.entries(made))('%s gives an intent the service schema accepts', (_name, intent) => {
    expect(validate(intent), JSON.stringify(validate.errors)).toBe(true)
  })

  it('fills id, timestamp (seconds) and constraints with defaults', () => {
    const i = made.transferNative
    expect(i.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(i.timestamp).toBe(1_760_000_000)
    expect(i.chain).toEqual({ type: 'evm', chainId: 8453 })
    expect(i.constraints).toEqual({ maxGasWei: '10000000000000000', deadline: 1_760_000_900, maxSlippageBps: 0 })
    expect(made.swapExactIn.constraints.maxSlippageBps).toBe(50)
    expect(made.transfer.action).toEqual({ type: 'transfer', asset: { kind: 'erc20', address: TOKEN, symbol: 'TUSD', decimals: 6 }, to: BOB, amount: '1500000' })
    expect(transferNative({ wallet: WALLET, to: BOB, amount: '1', now }).id).not.toBe(i.id)
  })

  it('options override the defaults; metadata only when given', () => {
    const i = transferNative({ wallet: WALLET, to: BOB, amount: '007', chainId: 1, maxGasWei: 5n, deadlineSeconds: 60, id: '6f1c1c55-6f5e-4a51-9d3c-3f0d1b0e8a11', source: 'agent', note: 'rent', now })
    expect(i).toMatchObject({ id: '6f1c1c55-6f5e-4a51-9d3c-3f0d1b0e8a11', chain: { chainId: 1 }, constraints: { maxGasWei: '5', deadline: 1_760_000_060 }, metadata: { source: 'agent', note: 'rent' } })
    expect((i.action as { amount: string }).amount).toBe('7')
    expect(made.approve).not.toHaveProperty('metadata')
  })

  it('refuses amounts that are not whole smallest units', () => {
    expect(() => transferNative({ wallet: WALLET, to: BOB, amount: '1.5' })).toThrow(/amount must be a whole number of the smallest unit/)
    expect(() => transferNative({ wallet: WALLET, to: BOB, amount: '-1' })).toThrow(TypeError)
  })
})
