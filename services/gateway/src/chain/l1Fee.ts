import { decodeFunctionResult, encodeFunctionData, parseGwei, serializeTransaction, type Address, type Hex } from 'viem'
import type { ChainClient } from './chainClients.js'

/**
 * OP-stack chains (Optimism 10, Base 8453) charge each transaction an L1 data
 * fee on top of gas × gas price, taken from the sender's balance at inclusion
 * and read beforehand from the GasPriceOracle predeploy. On Base it is often
 * most of what a transfer costs, so constraints.maxGasWei and policy
 * maxGasCostWei count it. (Arbitrum's L1 share is part of its gas estimate.)
 */
export const L1_FEE_CHAINS: ReadonlySet<number> = new Set([10, 8453])
export const GAS_PRICE_ORACLE: Address = '0x420000000000000000000000000000000000000F'

const GET_L1_FEE_ABI = [{ type: 'function', name: 'getL1Fee', stateMutability: 'view', inputs: [{ name: '_data', type: 'bytes' }], outputs: [{ name: '', type: 'uint256' }] }] as const

export interface L1FeeTx {
  to: Address
  data: Hex
  value: string
}

/** The L1 data fee in wei the chain will charge for this transaction; 0n where there is none. Throws when the node fails. */
export type L1FeeReader = (chain: ChainClient, tx: L1FeeTx) => Promise<bigint>

export interface L1FeeReaderOptions {
  /** Told once per chain whose node has no GasPriceOracle (a local chain run with Base's id). */
  noOracle?: (chainId: number) => void
}

/**
 * The oracle is asked with the unsigned transaction, serialized with the
 * chain's id and stand-in nonce and fees (read at the same time, not yet
 * known): the fee follows the transaction's size, and those fields are a few
 * bytes of it. The fee is the oracle's figure at that moment; the chain takes
 * the one at inclusion, which moves with L1's fees. A node of chain 10 or
 * 8453 without code at the predeploy is not an OP-stack node (anvil run with
 * Base's chain id, as `npm start` does): it charges no L1 fee. The oracle's
 * presence is kept once seen; its absence is asked again each time (found by
 * review: one empty answer, kept, switched the L1 fee off on a real chain
 * until a restart), which costs a local chain one eth_getCode in the same
 * batch as the other reads.
 */
export function createL1FeeReader(options: L1FeeReaderOptions = {}): L1FeeReader & { forget(chainId: number): void } {
  const oracleSeen = new Set<number>()
  const told = new Set<number>()
  const present = async (chain: ChainClient): Promise<boolean> => {
    if (oracleSeen.has(chain.chainId)) return true
    const code = await chain.client.getCode({ address: GAS_PRICE_ORACLE })
    if (code && code !== '0x') {
      oracleSeen.add(chain.chainId)
      return true
    }
    if (!told.has(chain.chainId)) {
      told.add(chain.chainId)
      options.noOracle?.(chain.chainId)
    }
    return false
  }
  const read = async (chain: ChainClient, tx: L1FeeTx): Promise<bigint> => {
    if (!L1_FEE_CHAINS.has(chain.chainId) || !(await present(chain))) return 0n
    const unsigned = serializeTransaction({
      type: 'eip1559',
      chainId: chain.chainId,
      to: tx.to,
      data: tx.data,
      value: BigInt(tx.value),
      nonce: 1,
      gas: tx.data === '0x' ? 21_000n : 300_000n,
      maxFeePerGas: parseGwei('5'),
      maxPriorityFeePerGas: parseGwei('1'),
    })
    const data = encodeFunctionData({ abi: GET_L1_FEE_ABI, functionName: 'getL1Fee', args: [unsigned] })
    const answer = await chain.client.call({ to: GAS_PRICE_ORACLE, data })
    return decodeFunctionResult({ abi: GET_L1_FEE_ABI, functionName: 'getL1Fee', data: answer.data ?? '0x' })
  }
  return Object.assign(read, { forget: (chainId: number) => void oracleSeen.delete(chainId) })
}
