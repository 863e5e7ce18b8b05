// Issue 3 end to end: the real signer and gateway processes, two real anvil
// chains, a real ERC-20. No mocks.
import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, getAddress, parseEther, type Address } from 'viem'
import { NATIVE_TOKEN_ADDRESS, type Action, type TxIntent } from '@countersign/shared'
import { anvilAccounts, rpc, startAnvil, type Anvil } from './support/anvil.js'
import { clientsFor, deployTestToken, erc20Allowance, erc20Balance } from './support/contracts.js'
import { intentFor } from './support/intents.js'
import { freePort, spawnService, tempDataDir, waitFor } from './support/processes.js'
import { entries, importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
const BOB = '0x000000000000000000000000000000000000b0b0' as Address
const CAROL = '0x000000000000000000000000000000000000ca01' as Address

let base: Anvil
let op: Anvil
let tokenBase: Address
let tokenOp: Address
let stack: Stack

const intent = (action: Action, chainId: 8453 | 10 = 8453, extra: Partial<TxIntent> = {}): TxIntent =>
  intentFor(WALLET, action, { chainId, maxGasWei: parseEther('0.05').toString(), extra })
const transferToken = (to: Address, amount: string, token = tokenBase): Action => ({
  type: 'transfer',
  asset: { kind: 'erc20', address: token, symbol: 'TUSD', decimals: 6 },
  to,
  amount,
})
const native = (to: Address, amount: string): Action => ({ type: 'transfer_native', to, amount })

async function receipt(hash: string, query = '') {
  return waitFor(
    async () => {
      const r = await stack.get(`/v1/tx/${hash}${query}`)
      return r.status === 200 ? r.body : null
    },
    { timeoutMs: 15_000, what: `receipt of ${hash}` },
  )
}

/**
 * sign-and-send again after the signer was killed under it. An intent the
 * signer signed but whose reply was lost, and whose nonce another of ours took
 * meanwhile, is signed again only once that transaction's block is safe
 * (anvil counts 32 blocks back: mined here) and with an operator's token (the
 * signer asks one for every replacement), as any client would go on. Whether
 * a reply was lost, and which intent took its nonce, is up to the race.
 */
async function retryAfterSignerKill(i: TxIntent): Promise<{ status: number; body: any }> {
  let r = await stack.post('/v1/tx/sign-and-send', { intent: i })
  if (r.status === 502 && String(r.body.message).includes('does not count as safe yet')) {
    await rpc(base.rpcUrl, 'anvil_mine', ['0x20'])
    r = await stack.post('/v1/tx/sign-and-send', { intent: i })
  }
  if (r.status === 403 && r.body.error === 'approval_required') r = await stack.post('/v1/tx/sign-and-send', { intent: i, approvalTokenId: await stack.grant(i) })
  return r
}

function auditEvents(limit = 100) {
  return stack.get(`/v1/approvals/history?limit=${limit}`).then((r) => r.body.events as Array<{ event: string; intentId: string; data: any }>)
}

beforeAll(async () => {
  ;[base, op] = await Promise.all([startAnvil({ chainId: 8453 }), startAnvil({ chainId: 10 })])
  ;[tokenBase, tokenOp] = await Promise.all([
    deployTestToken({ rpcUrl: base.rpcUrl, chainId: 8453, deployerKey: owner.privateKey, name: 'Test USD', symbol: 'TUSD', decimals: 6, supply: 1_000_000_000_000n }),
    deployTestToken({ rpcUrl: op.rpcUrl, chainId: 10, deployerKey: owner.privateKey, name: 'Test USD', symbol: 'TUSD', decimals: 6, supply: 1_000_000_000_000n }),
  ])
  stack = new Stack({ rpcUrls: { 8453: base.rpcUrl, 10: op.rpcUrl }, policy: { maxTxPerHour: 1000 } })
  expect(await importKey(stack.dataDir, owner.privateKey)).toBe(WALLET)
  await stack.start()
})

afterAll(async () => {
  await stack?.stop()
  await Promise.all([base?.stop(), op?.stop()])
})

describe('sign-and-send on real chains', () => {
  it('a native transfer needs a token, is mined, and cannot be replayed', async () => {
    const i = intent(native(BOB, parseEther('1.25').toString()))
    const refused = await stack.post('/v1/tx/sign-and-send', { intent: i })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ error: 'approval_required', txRequestHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })

    const before = await clientsFor(base.rpcUrl, 8453).pub.getBalance({ address: BOB })
    const token = await stack.grant(i)
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: i, approvalTokenId: token })
    expect(sent.status).toBe(200)
    expect(sent.body).toEqual({ intentId: i.id, signedTx: expect.stringMatching(/^0x02/), txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), broadcast: true, broadcastError: null })
    const r = await receipt(sent.body.txHash)
    expect(r).toMatchObject({ txHash: sent.body.txHash, status: 'success', chainId: 8453, from: WALLET.toLowerCase(), to: BOB })
    expect(typeof r.blockNumber).toBe('number')
    expect(r.gasUsed).toBe('21000')
    expect((await clientsFor(base.rpcUrl, 8453).pub.getBalance({ address: BOB })) - before).toBe(parseEther('1.25'))

    // The same intent again: the same transaction, no second signature, no token needed.
    const again = await stack.post('/v1/tx/sign-and-send', { intent: i })
    expect(again.status).toBe(200)
    expect(again.body.txHash).toBe(sent.body.txHash)

    // The consumed token for a new intent with the same content: refused.
    const replay = await stack.post('/v1/tx/sign-and-send', { intent: { ...i, id: randomUUID() }, approvalTokenId: token })
    expect(replay.status).toBe(403)
    expect(replay.body.error).toBe('invalid_approval_token')

    const events = (await auditEvents()).filter((e) => e.intentId === i.id).map((e) => e.event)
    expect(events.filter((e) => e === 'signature_created')).toHaveLength(1)
    expect(events).toContain('tx_broadcast')
    expect(events).toContain('signing_denied')
  })

  it('a token bound to another intent, an unknown token and a malformed token are refused', async () => {
    const a = intent(native(BOB, '1000'))
    const b = intent(native(CAROL, '1000'))
    const tokenForA = await stack.grant(a)
    const wrong = await stack.post('/v1/tx/sign-and-send', { intent: b, approvalTokenId: tokenForA })
    expect(wrong).toMatchObject({ status: 403, body: { error: 'invalid_approval_token' } })
    const unknown = await stack.post('/v1/tx/sign-and-send', { intent: b, approvalTokenId: randomUUID() })
    expect(unknown).toMatchObject({ status: 403, body: { error: 'invalid_approval_token' } })
    const malformed = await stack.post('/v1/tx/sign-and-send', { intent: b, approvalTokenId: 'not-a-uuid' })
    expect(malformed.status).toBe(400)
    // The refusal did not consume A's token.
    expect((await stack.post('/v1/tx/sign-and-send', { intent: a, approvalTokenId: tokenForA })).status).toBe(200)
    const denied = (await auditEvents()).filter((e) => e.intentId === b.id && e.event === 'signing_denied')
    expect(denied.map((e) => e.data.reason)).toEqual(['invalid_approval_token', 'invalid_approval_token'])
  })

  it('20 concurrent sign-and-send calls sharing one token: only the approved intent is signed, once', async () => {
    const template = intent(native(CAROL, '777'))
    const token = await stack.grant(template)
    // Half send the approved intent, half the same transaction under other intent ids (what a token thief would do).
    const intents = Array.from({ length: 20 }, (_, n) => (n % 2 === 0 ? template : { ...template, id: randomUUID() }))
    const results = await Promise.all(intents.map((i) => stack.post('/v1/tx/sign-and-send', { intent: i, approvalTokenId: token })))
    const ok = results.filter((r) => r.status === 200)
    expect(ok).toHaveLength(10)
    expect(new Set(ok.map((r) => r.body.txHash)).size).toBe(1)
    expect(results.filter((r) => r.status === 403 && r.body.error === 'invalid_approval_token')).toHaveLength(10)
    const ids = new Set(intents.map((i) => i.id))
    const signatures = (await auditEvents(100)).filter((e) => e.event === 'signature_created' && ids.has(e.intentId))
    expect(signatures).toHaveLength(1)
  })

  it('addresses in all upper case (valid, without a checksum) are simulated, signed, mined and read like any other', async () => {
    // viem refuses this case; the gateway hands every address on in its EIP-55 form.
    const upper = (a: string) => `0x${a.slice(2).toUpperCase()}` as Address
    const i = intentFor(upper(WALLET), transferToken(upper(CAROL), '1000', upper(tokenBase)), { chainId: 8453, maxGasWei: parseEther('0.05').toString() })
    const before = await erc20Balance(base.rpcUrl, 8453, tokenBase, CAROL)
    const pre = await stack.post('/v1/tx/preflight', i)
    expect(pre.status).toBe(200)
    expect(pre.body.simulationSuccess).toBe(true)
    const built = await stack.post('/v1/tx/build', i)
    expect(built.status).toBe(200)
    expect(built.body.txRequest.to).toBe(getAddress(tokenBase))
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: i })
    expect(sent.status).toBe(200)
    expect((await receipt(sent.body.txHash)).status).toBe('success')
    expect((await erc20Balance(base.rpcUrl, 8453, tokenBase, CAROL)) - before).toBe(1000n)
    const bal = await stack.get(`/v1/balance/${upper(tokenBase)}/${upper(CAROL)}?chainId=8453`)
    expect(bal).toEqual({ status: 200, body: { token: upper(tokenBase), account: upper(CAROL), balance: (before + 1000n).toString(), chainId: 8453 } })
  })

  it('an ERC-20 transfer and approve are mined and visible on chain and through the API', async () => {
    const before = await erc20Balance(base.rpcUrl, 8453, tokenBase, BOB)
    const t = await stack.post('/v1/tx/sign-and-send', { intent: intent(transferToken(BOB, '2500000')) })
    expect(t.status).toBe(200)
    expect((await receipt(t.body.txHash)).status).toBe('success')
    expect((await erc20Balance(base.rpcUrl, 8453, tokenBase, BOB)) - before).toBe(2_500_000n)
    const bal = await stack.get(`/v1/balance/${tokenBase}/${BOB}?chainId=8453`)
    expect(bal).toEqual({ status: 200, body: { token: tokenBase, account: BOB, balance: (before + 2_500_000n).toString(), chainId: 8453 } })

    const approve: Action = { type: 'approve', asset: { kind: 'erc20', address: tokenBase, decimals: 6 }, spender: CAROL, amount: '1234567' }
    const a = await stack.post('/v1/tx/sign-and-send', { intent: intent(approve) })
    expect(a.status).toBe(200)
    await receipt(a.body.txHash)
    expect(await erc20Allowance(base.rpcUrl, 8453, tokenBase, WALLET, CAROL)).toBe(1_234_567n)
  })

  // Found by review: 2^96 - 2, one below the "unlimited" line, is 10^12 times USDC's supply and was signed
  // at risk 0 with no operator, whatever unlimitedApprovals said.
  it('an approval of at least the token’s whole supply is not signed without an operator', async () => {
    const { pub } = clientsFor(base.rpcUrl, 8453)
    const supply = await pub.readContract({ address: tokenBase, abi: erc20Abi, functionName: 'totalSupply' })
    for (const amount of [(1n << 96n) - 2n, supply]) {
      const approve: Action = { type: 'approve', asset: { kind: 'erc20', address: tokenBase, decimals: 6 }, spender: CAROL, amount: amount.toString() }
      const i = intent(approve)
      const pf = await stack.post('/v1/tx/preflight', i)
      expect(pf.body.riskFactors).toContainEqual(expect.objectContaining({ id: 'approval_covers_supply', detail: expect.stringContaining(`at least its whole supply of ${supply}`) }))
      const a = await stack.post('/v1/tx/sign-and-send', { intent: i })
      expect(a.status, JSON.stringify(a.body)).toBe(403)
      expect(a.body.error).toBe('approval_required')
      expect(a.body.message).toContain('as good as unlimited')
    }
    expect(await erc20Allowance(base.rpcUrl, 8453, tokenBase, WALLET, CAROL)).toBeLessThan(supply)
  })

  it('10 concurrent sends for one wallet get consecutive nonces and are all mined', async () => {
    const { pub } = clientsFor(base.rpcUrl, 8453)
    const startNonce = await pub.getTransactionCount({ address: WALLET, blockTag: 'pending' })
    const results = await Promise.all(Array.from({ length: 10 }, () => stack.post('/v1/tx/sign-and-send', { intent: intent(transferToken(CAROL, '1')) })))
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200))
    const txs = await Promise.all(results.map((r) => pub.getTransaction({ hash: r.body.txHash })))
    expect(txs.map((t) => t.nonce).sort((x, y) => x - y)).toEqual(Array.from({ length: 10 }, (_, n) => startNonce + n))
    const receipts = await Promise.all(results.map((r) => receipt(r.body.txHash)))
    expect(receipts.every((r) => r.status === 'success')).toBe(true)
  })

  it('serves receipts and balances on the second chain, and picks the chain when asked', async () => {
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: intent(transferToken(BOB, '42', tokenOp), 10) })
    expect(sent.status).toBe(200)
    expect(await receipt(sent.body.txHash)).toMatchObject({ chainId: 10, status: 'success' })
    expect(await receipt(sent.body.txHash, '?chainId=10')).toMatchObject({ chainId: 10 })
    expect((await stack.get(`/v1/tx/${sent.body.txHash}?chainId=8453`)).status).toBe(404)
    expect((await stack.get(`/v1/balance/${tokenOp}/${BOB}?chainId=10`)).body.balance).toBe('42')
    const nativeBal = await stack.get(`/v1/balance/${NATIVE_TOKEN_ADDRESS}/${WALLET}?chainId=10`)
    expect(BigInt(nativeBal.body.balance)).toBeGreaterThan(0n)
    // Two chains configured, 8453 among them: a balance without chainId reads 8453 and says so (DESIGN.md §6).
    const unnamed = await stack.get(`/v1/balance/${NATIVE_TOKEN_ADDRESS}/${WALLET}`)
    expect(unnamed.status).toBe(200)
    expect(unnamed.body.chainId).toBe(8453)
    expect((await stack.get(`/v1/tx/0x${'ab'.repeat(32)}`)).body).toEqual({ error: 'not_found', message: expect.any(String) })
    expect((await stack.get(`/v1/balance/${tokenOp}/${BOB}?chainId=1`)).status).toBe(502)
    expect((await stack.get(`/v1/balance/${tokenOp}/${BOB}?chainId=1`)).body.error).toBe('no_rpc_client')
  })

  it('a gas cost above maxGasWei is refused before signing', async () => {
    const i = intent(transferToken(BOB, '1'), 8453, {})
    i.constraints.maxGasWei = '1000'
    const r = await stack.post('/v1/tx/sign-and-send', { intent: i })
    expect(r.status).toBe(403)
    expect(r.body).toEqual({ error: 'policy_denied', decision: 'deny', reasons: [expect.stringMatching(/exceeds constraints.maxGasWei 1000/)], policyVersion: '1' })
  })

  it('the signer holds no TCP or UDP socket, only its Unix sockets', () => {
    const pid = stack.signer.pid
    const inodes = readdirSync(`/proc/${pid}/fd`)
      .map((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`)
        } catch {
          return ''
        }
      })
      .map((l) => /^socket:\[(\d+)\]$/.exec(l)?.[1])
      .filter((x): x is string => !!x)
    expect(inodes.length).toBeGreaterThanOrEqual(2)
    const inodesIn = (table: string) => {
      try {
        return new Set(readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1).map((l) => l.trim().split(/\s+/)[9]).filter(Boolean))
      } catch {
        return new Set<string>()
      }
    }
    for (const table of ['tcp', 'tcp6', 'udp', 'udp6', 'raw', 'raw6']) {
      const t = inodesIn(table)
      expect(inodes.filter((i) => t.has(i)), `signer sockets in /proc/net/${table}`).toEqual([])
    }
    const unix = new Set(readFileSync(`/proc/${pid}/net/unix`, 'utf8').split('\n').slice(1).map((l) => l.trim().split(/\s+/)[6]).filter(Boolean))
    expect(inodes.every((i) => unix.has(i))).toBe(true)
  })

  it('signer killed with SIGKILL under load: 503 fast, nothing signed twice, recovery without a gateway restart, audit intact', async () => {
    const intents = Array.from({ length: 12 }, (_, n) => intent(transferToken(BOB, String(100 + n))))
    const inFlight = intents.map((i) => stack.post('/v1/tx/sign-and-send', { intent: i }))
    await new Promise((r) => setTimeout(r, 30))
    stack.signer.child.kill('SIGKILL')
    await stack.signer.exited()
    const first = await Promise.all(inFlight)
    for (const r of first) expect([200, 503]).toContain(r.status)
    const started = Date.now()
    const down = await stack.post('/v1/tx/sign-and-send', { intent: intent(transferToken(BOB, '5')) })
    expect(down.status).toBe(503)
    expect(down.body.error).toBe('signer_unavailable')
    expect(Date.now() - started).toBeLessThan(3000)

    await stack.startSigner()
    const second = await Promise.all(intents.map(retryAfterSignerKill))
    expect(second.map((r) => r.status)).toEqual(Array(12).fill(200))
    for (const [n, r] of first.entries()) if (r.status === 200) expect(second[n]!.body.txHash).toBe(r.body.txHash)
    await Promise.all(second.map((r) => receipt(r.body.txHash)))
    const ids = new Set(intents.map((i) => i.id))
    const sigs = (await auditEvents(100)).filter((e) => e.event === 'signature_created' && ids.has(e.intentId))
    expect(new Set(sigs.map((e) => e.intentId)).size).toBe(sigs.length)
    expect(sigs).toHaveLength(12)
    expect(await stack.auditVerify()).toMatch(/^audit chain OK: \d+ events, \d+ signed checkpoints/)
  })
})

describe('signer start-up', () => {
  it('a wrong passphrase stops the signer with an error naming the key', async () => {
    const dataDir = tempDataDir()
    await importKey(dataDir, anvilAccounts[1].privateKey)
    const signer = spawnService('signer-wrong-pass', entries.signer, { SERVICE_DATA_DIR: dataDir, SERVICE_DEMO_PASSPHRASE: 'wrong passphrase' })
    expect(await signer.exited()).toBe(1)
    expect(signer.output()).toContain(`cannot unlock key ${anvilAccounts[1].address}`)
    expect(signer.output()).toContain(path.join(dataDir, 'keystore'))
    expect(signer.output()).not.toContain('ready')
  })

  // Found by review: two signers on one data directory both removed the "stale" socket and both listened; the
  // first was unreachable from then on, and the second had unlocked every key and written audit checkpoints.
  it('a second signer, approver or gateway on a data directory in use stops at once, and the running stack keeps signing', async () => {
    const refused = async (service: 'signer' | 'approver' | 'gateway', env: Record<string, string>, dataDir: string) => {
      const second = spawnService(`${service}-second`, entries[service], env)
      expect(await second.exited(), second.output()).toBe(1)
      expect(second.output()).toContain(`another ${service} is running on the data directory ${dataDir} (it holds ${path.join(dataDir, `${service}.lock`)})`)
      expect(second.output()).not.toMatch(/keystore unlocked|audit key|ready/)
    }
    await refused('signer', stack.env, stack.dataDir)
    await refused('gateway', { ...stack.env, SERVICE_PORT: String(await freePort()), SERVICE_RPC_URL_8453: base.rpcUrl }, stack.dataDir)
    // This stack runs no approver: two on a data directory of their own.
    const approverDir = tempDataDir()
    const first = spawnService('approver-first', entries.approver, { SERVICE_DATA_DIR: approverDir, SERVICE_APPROVER_PORT: String(await freePort()) })
    try {
      await waitFor(() => first.output().includes('ready'), { timeoutMs: 15_000, what: 'the first approver' })
      await refused('approver', { SERVICE_DATA_DIR: approverDir, SERVICE_APPROVER_PORT: String(await freePort()) }, approverDir)
    } finally {
      first.kill()
    }
    const i = intent(native(BOB, '1000'))
    let r = await stack.post('/v1/tx/sign-and-send', { intent: i })
    if (r.status === 403 && r.body.error === 'approval_required') r = await stack.post('/v1/tx/sign-and-send', { intent: i, approvalTokenId: await stack.grant(i) })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect((await receipt(r.body.txHash)).status).toBe('success')
  })

  it('a gateway whose RPC URL points at another chain refuses to start, naming the variable', async () => {
    const gw = spawnService('gateway-wrong-chain', entries.gateway, { SERVICE_DATA_DIR: tempDataDir(), SERVICE_PORT: String(await freePort()), SERVICE_RPC_URL_1: base.rpcUrl })
    expect(await gw.exited()).toBe(1)
    expect(gw.output()).toContain('SERVICE_RPC_URL_1 points at chain 8453, but it is configured for chain 1')
  })
})
