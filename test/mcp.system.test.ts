// Issue 15 end to end: a real MCP client (the official SDK's Client over
// stdio) starts the linked `countersign-mcp` command against the real three
// processes on anvil with the local TUSD/TKA Uniswap pool, and an operator
// decides over HTTP while the tool waits.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import type { deployUniswapFixture } from '../scripts/uniswap-fixture.mjs'
import { rpc, type Anvil } from './support/anvil.js'
import { erc20Allowance, erc20Balance } from './support/contracts.js'
import { waitFor } from './support/processes.js'
import { BOB } from './support/intents.js'
import { MCP_WALLET, startMcpStack, type McpStack } from './support/mcp.js'
import type { Stack } from './support/stack.js'

const WALLET = MCP_WALLET
const CAROL = '0x000000000000000000000000000000000000ca01' as Address
/** The policy caps one TUSD transfer at 1,000 TUSD (6 decimals). */
const TUSD_CAP = '1000000000'
/** What a naive MCP host waits for a silent tool call. */
const NAIVE_TIMEOUT_MS = 30_000
const OPERATOR_DELAY_MS = 40_000

let anvil: Anvil
let stack: Stack
let uni: Awaited<ReturnType<typeof deployUniswapFixture>>
let mcp: Client
let mcpLog: () => string = () => ''

interface Progress {
  at: number
  message: string
}

/** Calls a tool as a host with a 30 s timeout would, except that progress resets it (resetTimeoutOnProgress). */
async function call(name: string, args: Record<string, unknown>, progress: Progress[] = []) {
  const started = Date.now()
  const result = (await mcp.callTool({ name, arguments: args }, undefined, {
    timeout: NAIVE_TIMEOUT_MS,
    resetTimeoutOnProgress: true,
    maxTotalTimeout: 330_000,
    onprogress: (p) => progress.push({ at: Date.now() - started, message: p.message ?? '' }),
  })) as CallToolResult
  const texts = result.content.map((c) => (c.type === 'text' ? c.text : ''))
  // A success carries structuredContent; an error its details as a JSON text block after the words.
  const structured = (result.isError ? JSON.parse(texts.at(-1)!) : result.structuredContent) as Record<string, any>
  return { ...result, text: texts.join('\n'), structured }
}

const requestIdOf = (message: string) => /waiting for operator approval \(request ([0-9a-f-]{36});/.exec(message)?.[1]

async function nativeBalance(address: Address): Promise<bigint> {
  return BigInt(await rpc<string>(anvil.rpcUrl, 'eth_getBalance', [address, 'latest']))
}

let running: McpStack | undefined

beforeAll(async () => {
  running = await startMcpStack({ clientName: 'countersign-system-test', tusdCap: BigInt(TUSD_CAP), maxTxPerHour: 1000 })
  ;({ anvil, uni, stack, mcp } = running)
  mcpLog = running.log
}, 180_000)

afterAll(async () => {
  await running?.stop()
})

describe('countersign-mcp over stdio against the real stack', () => {
  it('offers the nine tools, each input documented for a model', async () => {
    const { tools } = await mcp.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual([
      'countersign_approve',
      'countersign_balance',
      'countersign_intent_status',
      'countersign_pending',
      'countersign_preflight',
      'countersign_swap',
      'countersign_transfer',
      'countersign_transfer_native',
      'countersign_tx_status',
    ])
    for (const t of tools) {
      expect(t.description, t.name).toBeTruthy()
      expect(t.outputSchema?.type, t.name).toBe('object')
      for (const [field, schema] of Object.entries(t.inputSchema.properties ?? {})) expect((schema as { description?: string }).description, `${t.name}.${field}`).toBeTruthy()
    }
    const transfer = tools.find((t) => t.name === 'countersign_transfer')!
    expect((transfer.inputSchema.properties!.amount as { description: string }).description).toMatch(/smallest unit.*6 decimals, 1\.5 tokens is "1500000"/)
  })

  it('balance: native and TUSD, the amount shown with its decimals', async () => {
    const native = await call('countersign_balance', {})
    expect(native.isError).toBeFalsy()
    expect(native.structured).toMatchObject({ account: WALLET, chainId: 8453, native: true, decimals: 18, balance: (await nativeBalance(WALLET)).toString() })
    expect(native.text).toContain(`Balance of ${WALLET} on chain 8453:`)

    const tusd = await call('countersign_balance', { token: uni.tokenB, decimals: 6, symbol: 'TUSD' })
    const onChain = await erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, WALLET)
    expect(tusd.structured).toMatchObject({ token: uni.tokenB, balance: onChain.toString(), decimals: 6 })
    expect(tusd.text).toContain(`${onChain} (${(onChain / 1_000_000n).toString()}`)
  })

  it('native transfer: waits 40 s for the operator (past a 30 s host timeout), reporting the pending request, then mines', async () => {
    const progress: Progress[] = []
    const before = await nativeBalance(BOB)
    const started = Date.now()
    const pending = call('countersign_transfer_native', { to: BOB, amount: parseEther('0.25').toString(), note: 'system test: approve after 40 s' }, progress)

    // The operator looks only after 40 s, and approves the request the tool names in its next report.
    await new Promise((r) => setTimeout(r, OPERATOR_DELAY_MS))
    const seen = progress.length
    const requestId = await waitFor(() => progress.slice(seen).map((p) => requestIdOf(p.message)).find((id) => id !== undefined), { timeoutMs: 10_000, what: 'a progress report after 40 s' })
    const named = progress.map((p) => requestIdOf(p.message)).filter((id): id is string => id !== undefined)
    expect(named.length).toBeGreaterThanOrEqual(6)
    const listed = (await stack.get('/v1/approvals/pending')).body.pending as Array<{ requestId: string; summary: { action: string } }>
    expect(listed.find((p) => p.requestId === requestId)?.summary.action).toContain('Transfer 0.25 ETH')
    expect(await stack.decide(requestId, true)).toMatchObject({ status: 200, body: { approved: true } })

    const result = await pending
    expect(result.isError, result.text).toBeFalsy()
    expect(Date.now() - started).toBeGreaterThan(OPERATOR_DELAY_MS)
    // One request on the dashboard the whole time: every retry attached to it.
    expect(new Set(named)).toEqual(new Set([requestId]))
    expect(progress[0]!.at).toBeLessThan(NAIVE_TIMEOUT_MS)
    expect(result.structured).toMatchObject({ status: 'success', chainId: 8453, approval: { required: true, approvalTokenId: expect.any(String) } })
    expect(result.text).toContain('approved by an operator')
    expect(await nativeBalance(BOB)).toBe(before + parseEther('0.25'))
  }, 150_000)

  it('ERC-20 transfer within the policy limits goes through without an operator', async () => {
    const before = await erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, CAROL)
    const result = await call('countersign_transfer', { token: uni.tokenB, to: CAROL, amount: '12500000', decimals: 6, symbol: 'TUSD' })
    expect(result.isError, result.text).toBeFalsy()
    expect(result.structured).toMatchObject({ status: 'success', approval: { required: false } })
    // The amount in words is the service's, with the chain's decimals and symbol; the request line keeps smallest units.
    expect(result.text).toContain(`Done: transfer 12500000 smallest units of token ${uni.tokenB} to ${CAROL}.`)
    expect(result.text).toMatch(/^countersign's description, with the chain's decimals and symbols \(untrusted[^)]*\): "Transfer 12\.5 TUSD /m)
    expect(await erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, CAROL)).toBe(before + 12_500_000n)
  })

  it('approve the router, then swap on the local Uniswap pool, then read the status of the swap', async () => {
    const approved = await call('countersign_approve', { token: uni.tokenB, spender: uni.swapRouter02, amount: '50000000', decimals: 6, symbol: 'TUSD' })
    expect(approved.isError, approved.text).toBeFalsy()
    expect(approved.structured.status).toBe('success')
    expect(await erc20Allowance(anvil.rpcUrl, 8453, uni.tokenB as Address, WALLET, uni.swapRouter02 as Address)).toBe(50_000_000n)

    const preflight = await call('countersign_preflight', {
      action: { type: 'swap_exact_in', assetIn: { address: uni.tokenB }, assetOut: { address: uni.tokenA }, amountIn: '20000000', minAmountOut: parseEther('9').toString() },
    })
    expect(preflight.isError, preflight.text).toBeFalsy()
    expect(preflight.structured.simulationSuccess).toBe(true)
    const predictedOut = BigInt(preflight.structured.balanceDiffs.find((d: { token: string }) => d.token.toLowerCase() === uni.tokenA.toLowerCase()).change)

    const [tka0, tusd0] = await Promise.all([erc20Balance(anvil.rpcUrl, 8453, uni.tokenA as Address, WALLET), erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, WALLET)])
    const swap = await call('countersign_swap', {
      side: 'exact_in',
      tokenIn: uni.tokenB,
      tokenOut: uni.tokenA,
      amountIn: '20000000',
      // The quote less the client's declared 0.5 %: a looser minimum (9 TKA) would need an operator (slippage_unprotected).
      minAmountOut: ((predictedOut * 995n) / 1000n).toString(),
      decimalsIn: 6,
      decimalsOut: 18,
      symbolIn: 'TUSD',
      symbolOut: 'TKA',
    })
    expect(swap.isError, swap.text).toBeFalsy()
    expect(swap.structured.status).toBe('success')
    const [tka1, tusd1] = await Promise.all([erc20Balance(anvil.rpcUrl, 8453, uni.tokenA as Address, WALLET), erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, WALLET)])
    expect(tusd0 - tusd1).toBe(20_000_000n)
    expect(tka1 - tka0).toBe(predictedOut)

    const status = await call('countersign_tx_status', { txHash: swap.structured.txHash })
    expect(status.isError).toBeFalsy()
    expect(status.structured).toMatchObject({ txHash: swap.structured.txHash, state: 'mined', status: 'success', blockNumber: swap.structured.blockNumber })
    expect(status.text).toContain(`success in block ${swap.structured.blockNumber}`)
  })

  it('a policy denial is a tool error carrying the service\'s reasons', async () => {
    const result = await call('countersign_transfer', { token: uni.tokenB, to: CAROL, amount: '5000000000', decimals: 6 })
    expect(result.isError).toBe(true)
    expect(result.structured).toMatchObject({ error: 'policy_denied', status: 403 })
    expect(result.structured.reasons.length).toBeGreaterThan(0)
    expect(result.structured.reasons.join(' ')).toContain(TUSD_CAP)
    expect(result.text).toContain('policy denied')
    for (const reason of result.structured.reasons) expect(result.text).toContain(reason)
  })

  it('an operator decline is a tool error with the decline reason and why approval was needed', async () => {
    const progress: Progress[] = []
    const before = await nativeBalance(CAROL)
    const pending = call('countersign_transfer_native', { to: CAROL, amount: parseEther('0.1').toString() }, progress)
    let requestId: string | undefined
    for (let i = 0; i < 100 && !requestId; i++) {
      await new Promise((r) => setTimeout(r, 200))
      requestId = progress.map((p) => requestIdOf(p.message)).find((id) => id !== undefined)
    }
    expect(requestId).toBeDefined()
    // The agent can see what waits, but cannot decide it.
    const listed = await call('countersign_pending', { wallet: WALLET })
    expect(listed.structured.pending).toEqual([expect.objectContaining({ requestId, action: expect.stringContaining('Transfer 0.1 ETH'), ttlSeconds: expect.any(Number) })])
    expect(listed.text).toMatch(new RegExp(`^- request ${requestId} \\(risk \\d+; \\d+ s left\\): "Transfer 0\\.1 ETH`, 'm'))
    expect((await stack.decide(requestId!, false)).status).toBe(200)
    const result = await pending
    expect(result.isError).toBe(true)
    expect(result.structured).toMatchObject({ error: 'user_declined', status: 403, body: { approved: false, reason: 'user_declined' } })
    expect(result.structured.reasons.join(' ')).toMatch(/approval/)
    expect(result.text).toContain('The operator declined this transaction')
    expect(await nativeBalance(CAROL)).toBe(before)
  })

  it('pending lists what waits for an operator; the server logged nothing alarming', async () => {
    const result = await call('countersign_pending', {})
    expect(result.isError).toBeFalsy()
    expect(result.structured.pending).toEqual([])
    expect(result.text).toBe('No approval request is waiting.')
    expect(mcpLog()).toContain(`countersign-mcp: serving ${stack.url}`)
    expect(mcpLog()).not.toMatch(/warning|error/i)
  })
})
