// The node behind SERVICE_RPC_URL_8453 starts answering for another chain
// after the gateway started (a provider's misrouting, a load balancer, an
// operator's mistake). Found by review: descriptions, balances and
// simulations of chain 10 came back under chain 8453's name, and token facts
// learnt meanwhile (another token at the same address on chain 10) stayed
// cached until a restart. Two real anvils, one forwarding proxy between them.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Address } from 'viem'
import { anvilAccounts, fundAccount, startAnvil, type Anvil } from './support/anvil.js'
import { deployTestToken } from './support/contracts.js'
import { BOB, intentFor } from './support/intents.js'
import { waitFor } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
let base: Anvil
let optimism: Anvil
let stack: Stack
let target = ''
let proxyUrl = ''
let usdc: Address
const proxy = createServer((req, res) => {
  let body = ''
  req.on('data', (d) => (body += d))
  req.on('end', async () => {
    const r = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    res.writeHead(200, { 'content-type': 'application/json' }).end(await r.text())
  })
})

beforeAll(async () => {
  base = await startAnvil({ chainId: 8453 })
  optimism = await startAnvil({ chainId: 10 })
  // One deployer at one nonce: the same address on both chains, two different tokens.
  usdc = await deployTestToken({ rpcUrl: base.rpcUrl, chainId: 8453, deployerKey: owner.privateKey, name: 'USD Coin', symbol: 'USDC', decimals: 6, supply: 10n ** 15n })
  expect(await deployTestToken({ rpcUrl: optimism.rpcUrl, chainId: 10, deployerKey: owner.privateKey, name: 'Dai', symbol: 'DAI', decimals: 18, supply: 10n ** 30n })).toBe(usdc)
  await fundAccount(optimism.rpcUrl, WALLET, 7n * 10n ** 18n)
  target = base.rpcUrl
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
  stack = new Stack({ rpcUrls: { 8453: proxyUrl }, policy: { maxTxPerHour: 100 }, env: { SERVICE_CHAIN_CHECK_MS: '1000' } })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start()
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  proxy.closeAllConnections()
  proxy.close()
  await base?.stop()
  await optimism?.stop()
})

const pay = () => intentFor(WALLET, { type: 'transfer', asset: { kind: 'erc20', address: usdc }, to: BOB, amount: '5000000' }, { chainId: 8453 })

describe('an RPC endpoint that changes chain after start', () => {
  it('is refused (502) once the check sees it, its token facts are dropped, and it is served again once it answers for its chain', async () => {
    target = optimism.rpcUrl
    // Until the next check, what it answers is taken for chain 8453's (the token facts of chain 10 included).
    await stack.post('/v1/tx/build', pay())
    const refused = await waitFor(async () => {
      const r = await stack.post('/v1/tx/build', pay())
      return r.status === 502 ? r : null
    }, { timeoutMs: 10_000, what: 'build refused for the wrong chain' })
    expect(refused.body).toEqual({ error: 'rpc_error', message: 'chain 8453: its RPC endpoint now answers for chain 10; nothing is read from or sent to it until it answers for chain 8453 again' })
    expect((await stack.get(`/v1/balance/0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE/${WALLET}?chainId=8453`)).status).toBe(502)
    expect((await stack.post('/v1/tx/sign-and-send', { intent: pay() })).status).toBe(502)
    expect(stack.gateway.lines.join('\n')).toContain('the RPC endpoint of chain 8453 now answers for chain 10')

    target = base.rpcUrl
    const served = await waitFor(async () => {
      const r = await stack.post('/v1/tx/build', pay())
      return r.status === 200 ? r : null
    }, { timeoutMs: 10_000, what: 'build served again' })
    // Chain 8453's own facts: 5 USDC, not the 0.000000000005 DAI learnt from chain 10 before the check.
    expect(served.body.description).toContain('5 USDC')
  })
})
