// Talks to countersign only through the channel the sandbox provides.
const api = globalThis.countersign

export async function payInvoice(invoice) {
  const intent = {
    chainId: invoice.chainId,
    to: invoice.payee,
    value: invoice.amountWei,
    memo: `invoice ${invoice.id}`,
  }
  const receipt = await api.submitIntent(intent)
  if (receipt.status !== 'confirmed') {
    return { ok: false, reason: receipt.status }
  }
  return { ok: true, txHash: receipt.txHash }
}

export async function balance(address) {
  return globalThis.countersign.getBalance({ address, chainId: 1 })
}
