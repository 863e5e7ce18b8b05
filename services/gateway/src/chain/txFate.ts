import type { Hex } from '@countersign/shared'
import type { ChainClient } from './chainClients.js'

/**
 * What can still become of a signed transaction:
 * - `open`: its nonce is not used by a mined transaction yet; it can be mined
 *   (broadcast it);
 * - `mined`: it was mined (the node has its receipt, or the transaction in a block);
 * - `dead`: another of our own transactions was mined at its nonce, so it can
 *   never be mined (DESIGN §6 "crash window"): it may be signed again;
 * - `unknown`: its nonce is used, yet neither it nor another of ours at that
 *   nonce is found mined. A node that lags behind its own nonce count (or a
 *   load balancer in front of several) answers so; calling that `dead` had a
 *   retry sign and send a mined intent a second time. Nothing is signed then.
 */
export type TxFate = 'open' | 'mined' | 'dead' | 'unknown'

export async function txFate(chain: ChainClient, wallet: Hex, nonce: number, txHash: Hex, othersAtNonce: readonly Hex[]): Promise<TxFate> {
  const minedCount = await chain.client.getTransactionCount({ address: wallet, blockTag: 'latest' })
  if (minedCount <= nonce) return 'open'
  if (await isMined(chain, txHash)) return 'mined'
  for (const other of othersAtNonce) {
    if (other.toLowerCase() !== txHash.toLowerCase() && (await isMined(chain, other))) return 'dead'
  }
  return 'unknown'
}

/** A receipt, or else the transaction with a block number: two different indexes of the node. */
async function isMined(chain: ChainClient, txHash: Hex): Promise<boolean> {
  const receipt = await chain.client.request({ method: 'eth_getTransactionReceipt', params: [txHash] })
  if (receipt) return true
  const tx = (await chain.client.request({ method: 'eth_getTransactionByHash', params: [txHash] })) as { blockNumber?: string | null } | null
  return !!tx?.blockNumber
}
