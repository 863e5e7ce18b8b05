// Found by review: while the node failed to answer for one token (a rate
// limit, an outage), the approval card showed that token with the decimals
// the client declared, on a green card marked as checked by the chain:
// 10^12 units of a 6-decimals token declared with 18 read "Transfer 0.000001
// TUSD", and one click sent 1,000,000 TUSD. A token without chain facts is
// now shown in raw units with a red line, on the card and in the gateway's
// own description.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address, type Hex } from 'viem'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { deployTestToken } from './support/contracts.js'
import { BOB, intentFor } from './support/intents.js'
import { waitFor } from './support/processes.js'
import { startRpcProxy, type RpcProxy } from './support/rpcProxy.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[0]!
const WALLET = owner.address as Address
let anvil: Anvil
let proxy: RpcProxy
let token: Address

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  token = await deployTestToken({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: owner.privateKey as Hex, name: 'Test USD', symbol: 'TUSD', decimals: 6, supply: 10n ** 15n })
  proxy = await startRpcProxy(anvil.rpcUrl)
}, 120_000)

afterAll(async () => {
  proxy?.server.close()
  await anvil?.stop()
})

describe('a token the node does not answer for', () => {
  it('is shown in raw units with a red "unchecked token" line, not in the decimals the client declared', async () => {
    const stack = new Stack({ rpcUrls: { 8453: proxy.url }, policy: { maxTxPerHour: 1000, tokenLimits: { [token.toLowerCase()]: { requireApprovalAbove: '0' } } } })
    await importKey(stack.dataDir, owner.privateKey)
    await stack.start({ approver: true })
    try {
      // 1,000,000 TUSD (6 decimals on chain) = 10^12 units, declared with 18 decimals.
      const intent = intentFor(WALLET, { type: 'transfer', asset: { kind: 'erc20', address: token, symbol: 'TUSD', decimals: 18 }, to: BOB, amount: '1000000000000' }, { maxGasWei: parseEther('0.05').toString() })
      proxy.answer((call) =>
        call.method === 'eth_getCode' && String(call.params[0]).toLowerCase() === token.toLowerCase()
          ? { jsonrpc: '2.0', id: call.id, error: { code: -32005, message: 'rate limited' } }
          : undefined,
      )
      const asked = stack.post('/v1/tx/approve-request', intent)
      const pending = await waitFor(async () => ((await stack.get('/v1/approvals/pending')).body.pending as any[]).find((p) => p.summary.intentId === intent.id) ?? null, {
        timeoutMs: 40_000,
        what: 'the approval request',
      })
      proxy.answer(undefined)
      expect(pending.card.title).toBe(`Transfer 1000000000000 units of token ${token} to ${BOB} on Base`)
      expect(pending.card.tone).toBe('red')
      expect(pending.card.confirm).toBe(true)
      expect(pending.card.alerts).toContainEqual(expect.stringMatching(new RegExp(`^Unchecked token: ${token} could not be read from the chain`)))
      expect(pending.summary.unreadTokens).toEqual([token])
      expect(JSON.stringify(pending.card)).not.toContain('0.000001')
      // The operator declines; the gateway's own answer carries the same description.
      expect((await stack.decide(pending.requestId, false)).status).toBe(200)
      expect((await asked).status).toBe(403)
      proxy.answer((call) => (call.method === 'eth_getCode' && String(call.params[0]).toLowerCase() === token.toLowerCase() ? { jsonrpc: '2.0', id: call.id, error: { code: -32005, message: 'rate limited' } } : undefined))
      const built = await stack.post('/v1/tx/build', { ...intent, id: crypto.randomUUID() })
      proxy.answer(undefined)
      expect(built.status).toBe(200)
      expect(built.body.description).toBe(`Transfer 1000000000000 units of token ${token} to ${BOB} on Base`)
    } finally {
      await stack.stop()
    }
  }, 120_000)
})
