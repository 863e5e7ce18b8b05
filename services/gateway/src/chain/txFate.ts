import type { Hex } from '@countersign/shared'
import type { ChainClient } from './chainClients.js'

/**
 * What can still become of a signed transaction:
 * - `open`: its nonce is not used by a mined transaction yet; it can be mined
 *   (broadcast it);
 * - `mined`: it was mined (the node has its receipt, or the transaction in a block);
 * - `dead`: another of our own transactions was mined at its nonce, in a block
 *   the node counts as safe, so it can never be mined (DESIGN §6 "crash
 *   window"): it may be signed again, with an operator's approval (the signer
 *   asks one for every replacement);
 * - `settling`: another of ours was mined at its nonce, but in a block newer
 *   than the node's safe block. A reorganisation can still drop that block
 *   and let this one be mined: signing the intent again now could put two
 *   of its transactions on chain. Nothing is signed until the block is safe;
 * - `unknown`: its nonce is used, yet neither it nor another of ours at that
 *   nonce is found mined. A node that lags behind its own nonce count (or a
 *   load balancer in front of several) answers so; calling that `dead` had a
 *   retry sign and send a mined intent a second time. Nothing is signed then.
 */
export type TxFate = 'open' | 'mined' | 'dead' | 'settling' | 'unknown'

/** The fate, and for `settling` the block that has to become safe and the node's safe block now. */
export type TxFateFound = { fate: Exclude<TxFate, 'settling'> } | { fate: 'settling'; minedBy: { txHash: Hex; block: bigint; safeBlock: bigint } }

export async function txFate(chain: ChainClient, wallet: Hex, nonce: number, txHash: Hex, othersAtNonce: readonly Hex[]): Promise<TxFateFound> {
  const minedCount = await chain.client.getTransactionCount({ address: wallet, blockTag: 'latest' })
  if (minedCount <= nonce) return { fate: 'open' }
  if ((await minedIn(chain, txHash)).mined) return { fate: 'mined' }
  for (const other of othersAtNonce) {
    if (other.toLowerCase() === txHash.toLowerCase()) continue
    const { mined, block } = await minedIn(chain, other)
    // Mined in a block the node does not name: where it stands cannot be judged, as when it is not found.
    if (!mined || block === null) continue
    const safe = await chain.client.getBlock({ blockTag: 'safe' })
    return block <= safe.number ? { fate: 'dead' } : { fate: 'settling', minedBy: { txHash: other, block, safeBlock: safe.number } }
  }
  return { fate: 'unknown' }
}

/** Whether the node has it mined (a receipt, or else the transaction with a block: two different indexes of the node), and in which block. */
async function minedIn(chain: ChainClient, txHash: Hex): Promise<{ mined: boolean; block: bigint | null }> {
  const receipt = (await chain.client.request({ method: 'eth_getTransactionReceipt', params: [txHash] })) as { blockNumber?: string | null } | null
  if (receipt?.blockNumber) return { mined: true, block: BigInt(receipt.blockNumber) }
  const tx = (await chain.client.request({ method: 'eth_getTransactionByHash', params: [txHash] })) as { blockNumber?: string | null } | null
  if (tx?.blockNumber) return { mined: true, block: BigInt(tx.blockNumber) }
  return { mined: receipt !== null && receipt !== undefined, block: null }
}
