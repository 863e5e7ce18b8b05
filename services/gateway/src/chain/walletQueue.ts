/**
 * Transactions of one wallet on one chain run strictly one after another;
 * different wallets run in parallel. The queue also remembers the next nonce
 * it handed out, so a node whose pending count lags cannot make two requests
 * share a nonce.
 */
export interface WalletQueue {
  run<T>(chainId: number, wallet: string, task: (nonces: NonceBook) => Promise<T>): Promise<T>
}

export interface NonceBook {
  /**
   * max(chain pending count, next nonce after our last broadcast). A nonce
   * given to a sign call whose answer was lost is never marked used, so the
   * next assignment is reconciled with the chain: the same nonce again while
   * the chain says it is free (the signer's stored signature at it is then
   * replaced on the intent's retry, see routes/signAndSend.ts).
   */
  next(pendingCount: number): number
  /** Call once a transaction with this nonce reached the node. */
  used(nonce: number): void
}

export function createWalletQueue(): WalletQueue {
  const tails = new Map<string, Promise<unknown>>()
  const nextNonce = new Map<string, number>()
  return {
    run(chainId, wallet, task) {
      const key = `${chainId}:${wallet.toLowerCase()}`
      const book: NonceBook = {
        next: (pending) => Math.max(pending, nextNonce.get(key) ?? 0),
        used: (nonce) => nextNonce.set(key, Math.max(nextNonce.get(key) ?? 0, nonce + 1)),
      }
      const prev = tails.get(key) ?? Promise.resolve()
      const result = prev.then(() => task(book))
      const tail = result.catch(() => undefined)
      tails.set(key, tail)
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key)
      })
      return result
    },
  }
}
