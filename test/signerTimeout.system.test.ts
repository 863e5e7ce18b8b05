// A signer that does not answer in time: sign-and-send answers 503 saying the
// signature may or may not exist and that retrying the same intent is safe; the
// retry, once the signer runs again, returns the one signature it made.
// Real processes (signer stopped with SIGSTOP), real anvil.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { intentFor } from './support/intents.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
let chain: Anvil
let stack: Stack

beforeAll(async () => {
  chain = await startAnvil({ chainId: 8453 })
  stack = new Stack({ rpcUrls: { 8453: chain.rpcUrl }, policy: { requireApprovalAbove: { valueWei: parseEther('10').toString() } } })
  expect(await importKey(stack.dataDir, owner.privateKey)).toBe(WALLET)
  await stack.start()
}, 60_000)

afterAll(async () => {
  await stack?.stop()
  await chain?.stop()
})

describe('signer timeout', () => {
  it('503 says the signature may or may not exist; the retry of the same intent returns the one signature made meanwhile', async () => {
    const intent = intentFor(WALLET, { type: 'transfer_native', to: '0x000000000000000000000000000000000000b0b0', amount: '1000' }, { chainId: 8453, maxGasWei: parseEther('0.05').toString() })
    // Stopped, not dead: the sign call is written to its socket and waits there.
    stack.signer.child.kill('SIGSTOP')
    let timedOut: { status: number; body: any }
    try {
      timedOut = await stack.post('/v1/tx/sign-and-send', { intent })
    } finally {
      stack.signer.child.kill('SIGCONT')
    }
    expect(timedOut.status).toBe(503)
    expect(timedOut.body.error).toBe('signer_unavailable')
    expect(timedOut.body.message).toMatch(/may or may not exist/)
    expect(timedOut.body.message).toMatch(/Retrying the same intent is safe: signing is idempotent/)

    // Resumed, the signer signs the call it was sent (nobody waits for that answer any more).
    const signed = await waitForSignature(intent.id)
    const retry = await stack.post('/v1/tx/sign-and-send', { intent })
    expect(retry.status).toBe(200)
    expect(retry.body.txHash).toBe(signed)
    const events = (await stack.get('/v1/approvals/history?limit=100')).body.events as Array<{ event: string; intentId: string }>
    expect(events.filter((e) => e.event === 'signature_created' && e.intentId === intent.id)).toHaveLength(1)
  }, 60_000)
})

async function waitForSignature(intentId: string): Promise<string> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const events = (await stack.get('/v1/approvals/history?limit=100')).body.events as Array<{ event: string; intentId: string; data: { txHash?: string } }>
    const created = events.find((e) => e.event === 'signature_created' && e.intentId === intentId)
    if (created?.data.txHash) return created.data.txHash
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`no signature_created for ${intentId}`)
}
