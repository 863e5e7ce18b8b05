import { type Address, type Hex, type PublicClient } from 'viem'
import { decodeRevertReason } from './revertReason.js'
import { isNodeRefusal, isRefusalCode } from '../chain/nodeRefusal.js'

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'
const APPROVAL_TOPIC = '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925'

export interface TokenMovement {
  /** The token contract, or the native pseudo address 0xeeee…eeee for ETH. */
  token: string
  from: string
  to: string
  value: bigint
}

export interface ApprovalChange {
  token: string
  owner: string
  spender: string
  value: bigint
}

export interface Simulation {
  method: 'eth_simulateV1' | 'eth_call'
  success: boolean
  gasUsed: bigint | null
  revertReason: string | null
  /** Every Transfer the simulation emitted (native transfers traced as Transfers from the pseudo address). */
  transfers: TokenMovement[]
  approvals: ApprovalChange[]
}

interface SimulatedCall {
  status: string
  gasUsed: string
  returnData: string
  logs: Array<{ address: string; topics: string[]; data: string }>
  error?: { message?: string; data?: string }
}

const topicAddress = (t: string | undefined) => (t ? `0x${t.slice(26)}`.toLowerCase() : '')

/**
 * Runs the transaction from the wallet on top of the latest block. Prefers
 * eth_simulateV1 with transfer tracing (every ERC-20 and native movement
 * comes back as a log, anvil supports it); a node without it gets eth_call
 * plus eth_estimateGas, with movements left for the caller to derive.
 */
export async function simulateTx(client: PublicClient, tx: { from: Address; to: Address; data: Hex; value: bigint }): Promise<Simulation> {
  const call = { from: tx.from, to: tx.to, data: tx.data, value: `0x${tx.value.toString(16)}` }
  let result: Array<{ calls: SimulatedCall[] }>
  try {
    result = (await client.request({
      method: 'eth_simulateV1' as never,
      params: [{ blockStateCalls: [{ calls: [call] }], traceTransfers: true, validation: false }, 'latest'] as never,
    })) as Array<{ calls: SimulatedCall[] }>
  } catch (err) {
    const code = (err as { code?: number; cause?: { code?: number } }).code ?? (err as { cause?: { code?: number } }).cause?.code
    if (code === -32601 || /not (supported|found|available)/i.test((err as Error).message)) return fallback(client, tx)
    if (code !== undefined && isRefusalCode(code)) {
      const reason = (err as { details?: string }).details ?? (err as { shortMessage?: string }).shortMessage ?? (err as Error).message
      return { method: 'eth_simulateV1', success: false, gasUsed: null, revertReason: reason, transfers: [], approvals: [] }
    }
    throw err
  }
  const c = result[0]?.calls[0]
  if (!c) throw new Error('eth_simulateV1 returned no call result')
  const success = c.status === '0x1'
  const transfers: TokenMovement[] = []
  const approvals: ApprovalChange[] = []
  for (const log of c.logs ?? []) {
    // The contracts called write their own logs: one whose data is not the one
    // word ERC-20 gives an amount is not read as a movement (found by review:
    // a Transfer with empty data threw, and the preflight answered 502 as if
    // the node had failed). Left out, it moves no balance the simulation shows.
    const value = wordValue(log.data)
    if (value === null || log.topics.length !== 3) continue
    if (log.topics[0] === TRANSFER_TOPIC) {
      transfers.push({ token: log.address.toLowerCase(), from: topicAddress(log.topics[1]), to: topicAddress(log.topics[2]), value })
    } else if (log.topics[0] === APPROVAL_TOPIC) {
      approvals.push({ token: log.address.toLowerCase(), owner: topicAddress(log.topics[1]), spender: topicAddress(log.topics[2]), value })
    }
  }
  return {
    method: 'eth_simulateV1',
    success,
    gasUsed: BigInt(c.gasUsed),
    revertReason: success ? null : decodeRevertReason(c.error?.data ?? c.returnData, c.error?.message),
    transfers,
    approvals,
  }
}

/** A log's data as one 32-byte word's value, or null when it is anything else. */
function wordValue(data: string): bigint | null {
  return /^0x[0-9a-fA-F]{64}$/.test(data) ? BigInt(data) : null
}

async function fallback(client: PublicClient, tx: { from: Address; to: Address; data: Hex; value: bigint }): Promise<Simulation> {
  try {
    await client.call({ account: tx.from, to: tx.to, data: tx.data, value: tx.value, blockTag: 'latest' })
  } catch (err) {
    if (!isNodeRefusal(err)) throw err
    const data = (err as { data?: string; cause?: { data?: string } }).data ?? (err as { cause?: { data?: string } }).cause?.data
    return { method: 'eth_call', success: false, gasUsed: null, revertReason: decodeRevertReason(data, (err as { shortMessage?: string }).shortMessage), transfers: [], approvals: [] }
  }
  const gasUsed = await client.estimateGas({ account: tx.from, to: tx.to, data: tx.data, value: tx.value }).catch(() => null)
  return { method: 'eth_call', success: true, gasUsed, revertReason: null, transfers: [], approvals: [] }
}
