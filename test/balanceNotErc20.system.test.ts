// Contracts that are not ERC-20 tokens, against a real anvil. GET /v1/balance:
// the node answers, so it is the client's mistake (400), not an RPC failure.
// POST /v1/tx/preflight of an approve on one that does not answer decimals():
// the risk factor that needs an operator is there (found by review:
// approve(spender, n) on an ERC-721 has the ERC-20 selector and hands over
// item n, and its card read "n units of token 0x…").
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

const HOLDER = '0x2222222222222222222222222222222222222222'

// Found by review: each was a 502 rpc_error ("returned no data"), which clients and monitoring read as an outage to retry.
it.each([
  ['stops without returning anything', '0x00000000000000000000000000000000000a0001', '0x00', 'it returned no data'],
  ['reverts', '0x00000000000000000000000000000000000a0002', '0xfe', 'it reverted'],
  ['returns a single byte', '0x00000000000000000000000000000000000a0003', '0x60016000f3', 'it returned fewer bytes than a uint256'],
])('a contract that %s on balanceOf is a 400 saying it is not an ERC-20', async (_what, token, code, answer) => {
  await rpc(anvil.rpcUrl, 'anvil_setCode', [token, code])
  const res = await gw.app.inject({ method: 'GET', url: `/v1/balance/${token}/${HOLDER}` })
  expect(res.statusCode).toBe(400)
  expect(res.headers['x-service-version']).toBe('0.1.0')
  expect(res.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: `token ${token} did not answer balanceOf as an ERC-20 does on chain 8453 (${answer}); it is not an ERC-20` })
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
