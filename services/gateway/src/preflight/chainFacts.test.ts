import type { PublicClient } from 'viem'
import { describe, expect, it } from 'vitest'
import { ChainFacts, clippedSymbol, MAX_SYMBOL_LENGTH } from './chainFacts.js'

const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3'

/** What a node answers for a token whose contract says `symbol` and 6 decimals. */
const nodeAnswering = (symbol: string) =>
  ({
    getCode: async () => '0x60',
    readContract: async ({ functionName }: { functionName: string }) => (functionName === 'symbol' ? symbol : 6),
  }) as unknown as PublicClient

describe('ChainFacts.token', () => {
  it('keeps a symbol() answer of megabytes as 64 characters ending in "…", not whole for the life of the gateway', async () => {
    const facts = await new ChainFacts().token(nodeAnswering('W'.repeat(4 * 1024 * 1024)), 8453, TOKEN)
    expect(facts).toEqual({ hasCode: true, symbol: `${'W'.repeat(MAX_SYMBOL_LENGTH - 1)}…`, decimals: 6 })
    expect((await new ChainFacts().token(nodeAnswering('USDC'), 8453, TOKEN)).symbol).toBe('USDC')
  })

  it('keeps a token whose decimals came back, and asks again for one whose decimals() failed (a blip would otherwise mark it for good)', async () => {
    let decimalsCalls = 0
    let failing = true
    const node = {
      getCode: async () => '0x60',
      readContract: async ({ functionName }: { functionName: string }) => {
        if (functionName === 'symbol') return 'USDC'
        decimalsCalls += 1
        if (failing) throw new Error('the node timed out')
        return 6
      },
    } as unknown as PublicClient
    const facts = new ChainFacts()
    expect(await facts.token(node, 8453, TOKEN)).toEqual({ hasCode: true, symbol: 'USDC', decimals: null })
    await new Promise((r) => setImmediate(r))
    failing = false
    expect(await facts.token(node, 8453, TOKEN)).toEqual({ hasCode: true, symbol: 'USDC', decimals: 6 })
    await new Promise((r) => setImmediate(r))
    expect(await facts.token(node, 8453, TOKEN)).toEqual({ hasCode: true, symbol: 'USDC', decimals: 6 })
    expect(decimalsCalls).toBe(2)
  })

  it('cuts between characters, never inside a surrogate pair', () => {
    const clipped = clippedSymbol('😀'.repeat(100))
    expect(clipped.endsWith('…')).toBe(true)
    expect(clipped.length).toBeLessThanOrEqual(MAX_SYMBOL_LENGTH * 2)
    expect(clipped).toBe(`${'😀'.repeat(31)}…`)
    expect(clippedSymbol('x'.repeat(MAX_SYMBOL_LENGTH))).toBe('x'.repeat(MAX_SYMBOL_LENGTH))
  })
})
