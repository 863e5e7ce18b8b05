// GET /v1/balance for a contract that is not an ERC-20, against a real anvil:
// the node answers, so it is the client's mistake (400), not an RPC failure.
import { afterAll, beforeAll, expect, it } from 'vitest'
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
