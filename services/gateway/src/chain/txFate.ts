import type { Hex } from '@countersign/shared'
import type { ChainClient } from './chainClients.js'

/**
 * What can still become of a signed transaction:
 * - `open`: its nonce is not used by a mined transaction yet; it can be mined
 *   (broadcast it);
 * - `mined`: it was mined (it has a receipt);
 * - `dead`: a mined transaction used its nonce and it has no receipt, so it can
 *   never be mined (DESIGN §6 "crash window").
 */
export type TxFate = 'open' | 'mined' | 'dead'

export async function txFate(chain: ChainClient, wallet: Hex, nonce: number, txHash: Hex): Promise<TxFate> {
  const minedCount = await chain.client.getTransactionCount({ address: wallet, blockTag: 'latest' })
  if (minedCount <= nonce) return 'open'
  const receipt = await chain.client.request({ method: 'eth_getTransactionReceipt', params: [txHash] })
  return receipt ? 'mined' : 'dead'
}
