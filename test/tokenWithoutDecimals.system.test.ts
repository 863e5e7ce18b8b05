// POST /v1/tx/preflight of an approve on a contract that does not answer
// decimals(), against a real anvil: the risk factor that needs an operator is
// there. Found by review: approve(spender, n) on an ERC-721 has the ERC-20
// selector and hands over item n, and its card read "n units of token 0x…".
import { afterAll, beforeAll, expect, it } from 'vitest'
import { makeIntent } from '@countersign/shared/testing/intents'
import { makeTestGateway } from '../services/gateway/src/app.testkit.js'
import { rpc, startAnvil, type Anvil } from './support/anvil.js'

let anvil: Anvil
let gw: Awaited<ReturnType<typeof makeTestGateway>>
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  gw = await makeTestGateway({ rpcUrls: { 8453: anvil.rpcUrl } })
})
afterAll(async () => {
  await gw?.close()
  await anvil?.stop()
})

it('an approve on a contract without decimals() scores token_without_decimals, which needs an operator', async () => {
  const contract = '0x00000000000000000000000000000000000b0001'
  await rpc(anvil.rpcUrl, 'anvil_setCode', [contract, '0xfe']) // code that answers nothing: no symbol, no decimals
  const intent = makeIntent({ action: { type: 'approve', asset: { kind: 'erc20', address: contract }, spender: '0x2222222222222222222222222222222222222222', amount: '123456' } })
  const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/preflight', payload: intent })
  expect(res.statusCode, res.body).toBe(200)
  const report = res.json() as { riskFactors: Array<{ id: string; detail: string }> }
  expect(report.riskFactors).toContainEqual({ id: 'token_without_decimals', weight: 30, detail: expect.stringMatching(/^token 0x0{35}b0001 did not answer decimals\(\) as an ERC-20 token does/i) })
})
