import type { Hex } from '@countersign/shared'
import type { ChainClient } from './chainClients.js'
import { rpcMessage } from './chainClients.js'

export type BroadcastOutcome = { ok: true } | { ok: false; error: string }

/**
 * eth_sendRawTransaction. A node that already has the transaction (a retry of
 * something that did reach it) counts as success.
 */
export async function broadcastSignedTx(chain: ChainClient, signedTx: Hex, txHash: Hex): Promise<BroadcastOutcome> {
  try {
    await chain.client.request({ method: 'eth_sendRawTransaction', params: [signedTx] })
    return { ok: true }
  } catch (err) {
    const known = await chain.client.getTransaction({ hash: txHash }).then(
      () => true,
      () => false,
    )
    if (known) return { ok: true }
    return { ok: false, error: rpcMessage(err).slice(0, 300) }
  }
}
