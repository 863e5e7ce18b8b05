import type { TxRequest } from '@countersign/shared'

/** Field-by-field equality of two transaction requests, addresses and hex compared lowercased. */
export function sameTxRequest(a: TxRequest, b: TxRequest): boolean {
  return (
    a.to.toLowerCase() === b.to.toLowerCase() &&
    a.data.toLowerCase() === b.data.toLowerCase() &&
    BigInt(a.value) === BigInt(b.value) &&
    a.chainId === b.chainId &&
    a.type === b.type
  )
}
