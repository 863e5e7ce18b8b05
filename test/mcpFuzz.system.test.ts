// An agent's tool arguments are as untrusted as its HTTP requests: a model
// can be talked into anything. A real MCP client calls countersign-mcp over
// stdio with seeded arguments, random but valid ones and mutations of them,
// against the real stack on anvil (approvals in auto mode, so that what is
// valid goes all the way to the chain). Every call must end as a success or
// as a tool error in the server's own terms (an input refusal or the
// service's answer, never a 5xx or an exception from inside the server), and
// every transaction the wallet sent must be exactly what a successful call's
// arguments asked for: no call moves money it did not name, and nothing is
// sent by a call that failed. FUZZ_SEED / FUZZ_ROUNDS replay or lengthen a run.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { encodeFunctionData, erc20Abi, type Address, type Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { deployUniswapFixture } from '../scripts/uniswap-fixture.mjs'
import { rpc, type Anvil } from './support/anvil.js'
import { clone, fuzzSettings, mutate, oddValues, seededRandom, type Random } from './support/fuzz.js'
import { MCP_WALLET, startMcpStack, type McpStack } from './support/mcp.js'
import type { Stack } from './support/stack.js'

const { seed: SEED, rounds: ROUNDS } = fuzzSettings(400)
const WALLET = MCP_WALLET
const TUSD_CAP = 1_000_000_000n

let anvil: Anvil
let stack: Stack
let uni: Awaited<ReturnType<typeof deployUniswapFixture>>
let mcp: Client
let mcpLog: () => string = () => ''

let running: McpStack | undefined

beforeAll(async () => {
  running = await startMcpStack({ clientName: 'countersign-fuzz', tusdCap: TUSD_CAP, maxTxPerHour: 100_000, approverEnv: { SERVICE_APPROVAL_MODE: 'auto' } })
  ;({ anvil, uni, stack, mcp } = running)
  mcpLog = running.log
}, 180_000)

afterAll(async () => {
  await running?.stop()
})

const randomAddress = (rng: Random): Address => `0x${Array.from({ length: 40 }, () => '0123456789abcdef'[rng.int(16)]).join('')}` as Address
const upTo = (rng: Random, max: bigint): string => ((BigInt(rng.int(2 ** 30)) * max) / 2n ** 30n + 1n).toString()

/** Valid arguments for each tool, mostly inside the policy and the wallet's funds, sometimes over the TUSD cap. */
function validCall(rng: Random): { name: string; args: Record<string, unknown> } {
  const to = rng.chance(0.5) ? randomAddress(rng) : '0x000000000000000000000000000000000000bEEF'
  switch (rng.int(8)) {
    case 0:
      return { name: 'countersign_transfer_native', args: { to, amount: upTo(rng, 10n ** 15n) } }
    case 1:
      return { name: 'countersign_transfer', args: { token: uni.tokenB, to, amount: upTo(rng, rng.chance(0.8) ? 5_000_000n : 2n * TUSD_CAP), decimals: 6, symbol: 'TUSD' } }
    case 2:
      return { name: 'countersign_approve', args: { token: rng.pick([uni.tokenA, uni.tokenB]), spender: rng.pick([uni.swapRouter02, to]), amount: upTo(rng, 10n ** 8n) } }
    case 3: {
      const [tokenIn, tokenOut] = rng.chance(0.5) ? [uni.tokenB, uni.tokenA] : [uni.tokenA, uni.tokenB]
      return rng.chance(0.5)
        ? { name: 'countersign_swap', args: { side: 'exact_in', tokenIn, tokenOut, amountIn: upTo(rng, 10n ** 6n), minAmountOut: '1' } }
        : { name: 'countersign_swap', args: { side: 'exact_out', tokenIn, tokenOut, amountOut: upTo(rng, 10n ** 6n), maxAmountIn: (10n ** 24n).toString() } }
    }
    case 4:
      return { name: 'countersign_balance', args: rng.chance(0.5) ? {} : { token: rng.pick([uni.tokenA, uni.tokenB]) } }
    case 5:
      return { name: 'countersign_preflight', args: { action: { type: 'transfer_native', to, amount: upTo(rng, 10n ** 15n) } } }
    case 6:
      return { name: 'countersign_tx_status', args: { txHash: `0x${'ab'.repeat(32)}` } }
    default:
      return { name: 'countersign_pending', args: {} }
  }
}

type Outcome =
  | { kind: 'ok'; structured: Record<string, unknown> }
  | { kind: 'tool error'; error: string; status?: number; text: string }
  | { kind: 'invalid'; text: string }
  | { kind: 'other'; text: string }

async function callTool(name: string, args: unknown): Promise<Outcome> {
  let result: CallToolResult
  try {
    result = (await mcp.callTool({ name, arguments: args as Record<string, unknown> }, undefined, { timeout: 60_000 })) as CallToolResult
  } catch (err) {
    const { code, message } = err as { code?: unknown; message?: string }
    // The protocol's own refusal of arguments or of an unknown tool.
    if (code === -32602) return { kind: 'invalid', text: message ?? '' }
    return { kind: 'other', text: `${String(code)} ${message ?? String(err)}` }
  }
  const texts = result.content.map((c) => (c.type === 'text' ? c.text : ''))
  if (!result.isError) return { kind: 'ok', structured: (result.structuredContent ?? {}) as Record<string, unknown> }
  // The SDK's input validation answers as a tool error whose only text names the protocol error.
  if (texts.length === 1 && /^MCP error -32602: /.test(texts[0]!)) return { kind: 'invalid', text: texts[0]! }
  try {
    const details = JSON.parse(texts.at(-1)!) as { error?: unknown; status?: unknown }
    if (typeof details.error !== 'string') return { kind: 'other', text: texts.join('\n') }
    return { kind: 'tool error', error: details.error, ...(typeof details.status === 'number' ? { status: details.status } : {}), text: texts.join('\n') }
  } catch {
    return { kind: 'other', text: texts.join('\n') }
  }
}

interface Sent {
  name: string
  args: Record<string, unknown>
  txHash: Hex
}

const word = (hex: string) => hex.toLowerCase().replace(/^0x/, '').padStart(64, '0')
const uintWord = (n: string) => BigInt(n).toString(16).padStart(64, '0')

/** What the transaction a successful call sent must be, from its arguments alone. */
async function checkSent(s: Sent): Promise<string[]> {
  const tx = await rpc<{ from: string; to: string | null; value: Hex; input: Hex } | null>(anvil.rpcUrl, 'eth_getTransactionByHash', [s.txHash])
  const what = `${s.name} ${JSON.stringify(s.args)} → ${s.txHash}`
  if (!tx) return [`${what}: no such transaction on the chain`]
  const problems: string[] = []
  const expectTo = (addr: string) => tx.to?.toLowerCase() !== addr.toLowerCase() && problems.push(`${what}: sent to ${tx.to}, not ${addr}`)
  if (tx.from.toLowerCase() !== WALLET.toLowerCase()) problems.push(`${what}: sent from ${tx.from}`)
  const a = s.args as Record<string, string>
  switch (s.name) {
    case 'countersign_transfer_native':
      expectTo(a.to!)
      if (BigInt(tx.value) !== BigInt(a.amount!) || tx.input !== '0x') problems.push(`${what}: value ${BigInt(tx.value)} data ${tx.input}`)
      break
    case 'countersign_transfer':
      expectTo(a.token!)
      if (BigInt(tx.value) !== 0n || tx.input !== encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [a.to!.toLowerCase() as Address, BigInt(a.amount!)] })) problems.push(`${what}: data ${tx.input}`)
      break
    case 'countersign_approve':
      expectTo(a.token!)
      if (BigInt(tx.value) !== 0n || tx.input !== encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [a.spender!.toLowerCase() as Address, BigInt(a.amount!)] })) problems.push(`${what}: data ${tx.input}`)
      break
    case 'countersign_swap': {
      expectTo(a.router ?? uni.swapRouter02)
      // exactInputSingle / exactOutputSingle inside the router's multicall (so not aligned to the outer
      // words): tokenIn, tokenOut, the wallet as recipient and the two amounts, 32-byte words in that order.
      const words = [word(a.tokenIn!), word(a.tokenOut!), word(WALLET), ...(a.side === 'exact_in' ? [uintWord(a.amountIn!), uintWord(a.minAmountOut!)] : [uintWord(a.amountOut!), uintWord(a.maxAmountIn!)])]
      const body = tx.input.toLowerCase()
      let from = 0
      for (const w of words) {
        const at = body.indexOf(w, from)
        if (at === -1) {
          problems.push(`${what}: the router call lacks ${w} (in order: tokenIn, tokenOut, recipient, amounts)`)
          break
        }
        from = at + w.length
      }
      if (BigInt(tx.value) !== 0n) problems.push(`${what}: value ${BigInt(tx.value)}`)
      break
    }
    default:
      problems.push(`${what}: ${s.name} is not a sending tool, yet it returned a txHash`)
  }
  return problems
}

describe('countersign-mcp under fuzzed tool calls', () => {
  it(`ends every call cleanly and sends exactly what successful calls named (seed ${SEED}, ${ROUNDS} calls)`, async () => {
    const rng = seededRandom(SEED)
    const problems: string[] = []
    const sent: Sent[] = []
    const tally: Record<string, number> = {}
    const startNonce = BigInt(await rpc<Hex>(anvil.rpcUrl, 'eth_getTransactionCount', [WALLET, 'latest']))
    // The router may spend both tokens, so that swaps can reach the chain (the fuzzed approvals change that as they go).
    for (const [token, amount] of [[uni.tokenA, 10n ** 30n], [uni.tokenB, TUSD_CAP]] as const) {
      const args = { token, spender: uni.swapRouter02, amount: amount.toString() }
      const outcome = await callTool('countersign_approve', args)
      expect(outcome.kind, JSON.stringify(outcome)).toBe('ok')
      if (outcome.kind === 'ok') sent.push({ name: 'countersign_approve', args, txHash: outcome.structured.txHash as Hex })
    }
    for (let round = 0; round < ROUNDS && problems.length < 10; round++) {
      const valid = validCall(rng)
      let { name } = valid
      let args: unknown = valid.args
      const roll = rng.next()
      const mutated = roll >= 0.35
      if (roll < 0.35) {
        // as generated
      } else if (roll < 0.85) args = mutate(rng, valid.args, [validCall(rng).args, validCall(rng).args])
      else if (roll < 0.92) args = rng.chance(0.5) ? clone(rng.pick(oddValues.filter((v) => v && typeof v === 'object' && !Array.isArray(v)))) : { ...valid.args, wallet: rng.pick(oddValues) }
      else name = rng.pick(['countersign_sign', 'countersign_transfer ', 'COUNTERSIGN_TRANSFER', '__proto__', 'constructor', ''])
      const outcome = await callTool(name, args)
      const what = `round ${round} ${name} ${JSON.stringify(args)?.slice(0, 200)}`
      tally[outcome.kind === 'tool error' ? `error ${outcome.error}` : outcome.kind] = (tally[outcome.kind === 'tool error' ? `error ${outcome.error}` : outcome.kind] ?? 0) + 1
      switch (outcome.kind) {
        case 'ok':
          if (typeof outcome.structured.txHash === 'string' && name !== 'countersign_tx_status') {
            const s = { name, args: args as Record<string, unknown>, txHash: outcome.structured.txHash as Hex }
            sent.push(s)
            problems.push(...(await checkSent(s)).map((p) => `round ${round}: ${p}`))
          }
          break
        case 'tool error':
          if (outcome.error === 'client_error' || outcome.error === 'internal_error' || (outcome.status ?? 0) === 500) problems.push(`${what}: ${outcome.text}`)
          break
        case 'invalid':
          if (!mutated && name === valid.name) problems.push(`${what}: valid arguments refused as invalid: ${outcome.text}`)
          break
        default:
          problems.push(`${what}: ${outcome.text}`)
      }
    }
    // Nothing left the wallet but what the successful calls reported.
    const endNonce = BigInt(await rpc<Hex>(anvil.rpcUrl, 'eth_getTransactionCount', [WALLET, 'latest']))
    // An identical call within 15 minutes is sent as the earlier call's intent and reports that same transaction.
    const distinct = new Set(sent.map((s) => s.txHash)).size
    if (endNonce - startNonce !== BigInt(distinct)) problems.push(`the wallet sent ${endNonce - startNonce} transactions; successful calls reported ${distinct}`)
    expect(problems, `seed ${SEED}; outcomes ${JSON.stringify(tally)}`).toEqual([])
    // The run reached the chain, the policy and the input checks (else the fuzzer, not the server, is broken).
    expect(sent.length, JSON.stringify(tally)).toBeGreaterThan(5)
    expect(tally.invalid ?? 0, JSON.stringify(tally)).toBeGreaterThan(5)
    expect(tally['error policy_denied'] ?? 0, JSON.stringify(tally)).toBeGreaterThan(0)
    expect(sent.filter((s) => s.name === 'countersign_swap').length, JSON.stringify(tally)).toBeGreaterThan(0)
    // The server is still there, and said nothing alarming.
    expect((await callTool('countersign_pending', {})).kind).toBe('ok')
    expect(mcpLog()).not.toMatch(/TypeError|ReferenceError|unhandled|uncaught/i)
  }, 600_000)
})
