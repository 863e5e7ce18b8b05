// Issue 11 end to end: the side doors an attacker found, on the real three
// processes and a real anvil chain with a real ERC-20 (TUSD).
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, parseEther, type Address } from 'viem'
import {
  buildTransaction,
  createRpcClient,
  defaultRouterTable,
  RpcError,
  SIGNER_SOCKET,
  SIGNING_REFUSED,
  type Action,
  type SignResult,
  type TxIntent,
} from '@countersign/shared'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { clientsFor, deployTestToken, erc20Allowance, erc20Balance } from './support/contracts.js'
import { intentFor } from './support/intents.js'
import { repoRoot, tempDataDir, waitFor } from './support/processes.js'
import { startRpcProxy } from './support/rpcProxy.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[0]
const stranger = anvilAccounts[1]
const WALLET = owner.address as Address
const STRANGER = stranger.address as Address
const FRIEND = '0x000000000000000000000000000000000000f00d' as Address
const UNLIMITED = ((1n << 256n) - 1n).toString()
const TUSD = (n: number) => (BigInt(n) * 10n ** 6n).toString()

let anvil: Anvil
let tusd: Address
let other: Address
let stack: Stack

const intent = (action: Action, o: { maxGasWei?: string } = {}): TxIntent => intentFor(WALLET, action, { chainId: 8453, maxGasWei: o.maxGasWei ?? parseEther('0.05').toString() })
const approve = (spender: Address, amount: string, token = tusd): Action => ({
  type: 'approve',
  asset: { kind: 'erc20', address: token, symbol: token === tusd ? 'TUSD' : 'OTH', decimals: 6 },
  spender,
  amount,
})
const transfer = (to: Address, amount: string): Action => ({ type: 'transfer', asset: { kind: 'erc20', address: tusd, symbol: 'TUSD', decimals: 6 }, to, amount })

async function pendingIds(on: Stack = stack): Promise<string[]> {
  const r = await on.get('/v1/approvals/pending')
  return (r.body.pending as Array<{ summary: { intentId: string } }>).map((p) => p.summary.intentId)
}

/** Calls the signer on its own socket, as a compromised gateway could. */
async function signDirectly(i: TxIntent, on: Stack = stack, nonce?: number): Promise<SignResult> {
  const built = buildTransaction(i, defaultRouterTable())
  nonce ??= await clientsFor(anvil.rpcUrl, 8453).pub.getTransactionCount({ address: i.wallet.address, blockTag: 'pending' })
  const client = createRpcClient({ socketPath: path.join(on.dataDir, 'run', SIGNER_SOCKET) })
  try {
    return await client.call<SignResult>('sign', { intent: i, txRequest: built.txRequest, nonce, gas: '100000', maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000' })
  } finally {
    client.close()
  }
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  // One after the other: both come from the same deployer nonce sequence.
  tusd = await deployTestToken({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: owner.privateKey, name: 'Test USD', symbol: 'TUSD', decimals: 6, supply: 1_000_000_000_000n })
  other = await deployTestToken({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: owner.privateKey, name: 'Other', symbol: 'OTH', decimals: 6, supply: 1_000_000_000_000n })
  // The policy: one allowlisted recipient, TUSD capped at 100 per transfer.
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000, recipientAllowlist: [FRIEND], tokenLimits: { [tusd]: { maxAmount: TUSD(100) } } } })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start({ approver: true })
})

afterAll(async () => {
  await stack?.stop()
  await anvil?.stop()
})

describe('approve is an outflow to its spender', () => {
  it('what was already refused: 200 TUSD to the friend, 1 TUSD to a stranger', async () => {
    expect(await stack.post('/v1/tx/build', intent(transfer(FRIEND, TUSD(200))))).toMatchObject({ status: 403, body: { error: 'policy_denied' } })
    expect(await stack.post('/v1/tx/build', intent(transfer(STRANGER, TUSD(1))))).toMatchObject({ status: 403, body: { error: 'policy_denied' } })
  })

  it('the attack: an unlimited TUSD approval to a stranger is refused at build, approve-request, sign-and-send and the signer socket', async () => {
    const attack = intent(approve(STRANGER, UNLIMITED))
    const reasons = [
      `spender ${STRANGER} is not in the recipient allowlist or the contract allowlist`,
      `approval amount ${UNLIMITED} of token ${tusd} exceeds the maximum of ${TUSD(100)}`,
    ]
    const built = await stack.post('/v1/tx/build', attack)
    expect(built).toEqual({ status: 403, body: { error: 'policy_denied', decision: 'deny', reasons, policyVersion: '1' } })

    const requested = await stack.post('/v1/tx/approve-request', attack)
    expect(requested.status).toBe(403)
    expect(requested.body).toEqual({ error: 'policy_denied', decision: 'deny', reasons: expect.arrayContaining(reasons), policyVersion: '1' })
    expect(await pendingIds()).not.toContain(attack.id)

    const sent = await stack.post('/v1/tx/sign-and-send', { intent: attack })
    // The same policy error body at sign time, decision included (SPEC's sample omits it; one helper builds all five).
    expect(sent).toEqual({ status: 403, body: { error: 'policy_denied', decision: 'deny', reasons: expect.arrayContaining(reasons), policyVersion: '1' } })

    const direct = await signDirectly(attack).then(
      () => null,
      (err: unknown) => err,
    )
    expect(direct).toBeInstanceOf(RpcError)
    expect((direct as RpcError).code).toBe(SIGNING_REFUSED)
    expect((direct as RpcError).data).toMatchObject({ reason: 'policy_deny', reasons })

    // Nothing was signed: the stranger has no allowance and transferFrom fails.
    expect(await erc20Allowance(anvil.rpcUrl, 8453, tusd, WALLET, STRANGER)).toBe(0n)
    const { pub } = clientsFor(anvil.rpcUrl, 8453)
    const balance = await erc20Balance(anvil.rpcUrl, 8453, tusd, WALLET)
    await expect(
      pub.simulateContract({ account: STRANGER, address: tusd, abi: erc20Abi, functionName: 'transferFrom', args: [WALLET, STRANGER, balance] }),
    ).rejects.toThrow()
    const history = (await stack.get('/v1/approvals/history?limit=100')).body.events as Array<{ intentId: string; event: string; data: { reason?: string } }>
    const mine = history.filter((e) => e.intentId === attack.id)
    expect(mine.some((e) => e.event === 'signature_created')).toBe(false)
    expect(mine.filter((e) => e.event === 'signing_denied').map((e) => e.data.reason)).toContain('policy_deny')
  })

  it('an approve within the limit to the allowlisted spender is signed and mined', async () => {
    const ok = intent(approve(FRIEND, TUSD(50)))
    expect((await stack.post('/v1/tx/build', ok)).status).toBe(200)
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: ok })
    expect(sent.status).toBe(200)
    await waitFor(async () => ((await stack.get(`/v1/tx/${sent.body.txHash}`)).status === 200 ? true : null), { what: 'the receipt' })
    expect(await erc20Allowance(anvil.rpcUrl, 8453, tusd, WALLET, FRIEND)).toBe(50_000_000n)
  })

  it('an unlimited approval of a token without limits waits for the operator by default', async () => {
    const unlimited = intent(approve(FRIEND, UNLIMITED, other))
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: unlimited })
    expect(sent.status).toBe(403)
    expect(sent.body).toMatchObject({ error: 'approval_required' })
    expect(sent.body.message).toContain(`an unlimited approval (2^96 - 1 or more) of token ${other} to ${FRIEND} needs an operator's approval`)

    const waiting = stack.post('/v1/tx/approve-request', unlimited)
    const pending = await waitFor(
      async () => {
        const r = await stack.get('/v1/approvals/pending')
        return (r.body.pending as Array<{ requestId: string; summary: { intentId: string; spender: string; amount: string } }>).find((p) => p.summary.intentId === unlimited.id) ?? null
      },
      { what: 'the unlimited approval on the pending list' },
    )
    expect(pending.summary.spender).toBe(FRIEND)
    expect(pending.summary.amount).toBe(`an unlimited amount of token ${other}`)
    await stack.decide(pending.requestId, false)
    expect((await waiting).body).toMatchObject({ approved: false, reason: 'user_declined' })
    expect(await erc20Allowance(anvil.rpcUrl, 8453, other, WALLET, FRIEND)).toBe(0n)
  })
})

async function pendingRequest(on: Stack, i: TxIntent) {
  return waitFor(
    async () => {
      const r = await on.get('/v1/approvals/pending')
      return (r.body.pending as Array<{ requestId: string; summary: { intentId: string; policyReasons: string[] } }>).find((p) => p.summary.intentId === i.id) ?? null
    },
    { what: `intent ${i.id} on the pending list` },
  )
}

/** A node whose eth_simulateV1 fails as a broken node's would: nothing can be simulated, everything else works. */
const noSimulationProxy = (target: string) =>
  startRpcProxy(target, (call) => (call.method === 'eth_simulateV1' ? { jsonrpc: '2.0', id: call.id, error: { code: -32000, message: 'simulation backend unavailable' } } : undefined))

describe('risk at sign time', () => {
  it('a direct sign-and-send over maxRiskScore is 403 policy_denied with the risk reason, as approve-request is', async () => {
    // The second finding: risk 25 (an unlimited approval) against a ceiling of 20.
    const strict = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000, maxRiskScore: 20, unlimitedApprovals: 'allow' } })
    await importKey(strict.dataDir, owner.privateKey)
    await strict.start({ approver: true })
    try {
      const risky = intent(approve(FRIEND, UNLIMITED, other))
      const reason = 'risk score 25 exceeds the maximum of 20'
      const viaRequest = await strict.post('/v1/tx/approve-request', risky)
      expect(viaRequest).toEqual({ status: 403, body: { error: 'policy_denied', decision: 'deny', reasons: [reason], policyVersion: '1' } })
      // The same intent again, and a fresh one never preflighted: sign-and-send refuses both.
      for (const i of [risky, intent(approve(FRIEND, UNLIMITED, other))]) {
        const sent = await strict.post('/v1/tx/sign-and-send', { intent: i })
        expect(sent).toEqual({ status: 403, body: { error: 'policy_denied', decision: 'deny', reasons: [reason], policyVersion: '1' } })
      }
      expect(await erc20Allowance(anvil.rpcUrl, 8453, other, WALLET, FRIEND)).toBe(0n)
      const events = (await strict.get('/v1/approvals/history?limit=100')).body.events as Array<{ event: string; intentId: string; data: { reason?: string; riskScore?: number } }>
      const denied = events.filter((e) => e.intentId === risky.id && e.event === 'signing_denied')
      expect(denied).toEqual([expect.objectContaining({ data: expect.objectContaining({ reason: 'policy_deny', riskScore: 25 }) })])
      // The first sign-and-send reused approve-request's preflight; the never-preflighted one ran its own.
      expect(events.filter((e) => e.intentId === risky.id && e.event === 'preflight_completed')).toHaveLength(1)
    } finally {
      await strict.stop()
    }
  })

  it('when nothing can be simulated, sign-and-send requires a token; a bogus one is refused, the operator-approved one signs', async () => {
    const proxy = await noSimulationProxy(anvil.rpcUrl)
    const blind = new Stack({ rpcUrls: { 8453: proxy.url }, policy: { maxTxPerHour: 1000 } })
    await importKey(blind.dataDir, owner.privateKey)
    await blind.start({ approver: true })
    try {
      // An ERC-20 transfer the policy allows outright, were it simulated.
      const i = intent(transfer(FRIEND, TUSD(1)))
      const refused = await blind.post('/v1/tx/sign-and-send', { intent: i })
      expect(refused.status).toBe(403)
      expect(refused.body).toMatchObject({ error: 'approval_required', txRequestHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
      expect(refused.body.message).toContain('no simulation could run for this intent; approval required')
      // A made-up token id: the gateway passes it on, and the signer, told that approval is required, checks it.
      const bogus = await blind.post('/v1/tx/sign-and-send', { intent: i, approvalTokenId: randomUUID() })
      expect(bogus).toMatchObject({ status: 403, body: { error: 'invalid_approval_token' } })

      const waiting = blind.post('/v1/tx/approve-request', i)
      const p = await pendingRequest(blind, i)
      expect(p.summary.policyReasons).toEqual(['no simulation could run for this intent; approval required'])
      await blind.decide(p.requestId, true)
      const approved = await waiting
      expect(approved.body).toMatchObject({ approved: true, approvalRequired: true, approvalTokenId: expect.any(String) })
      const before = await erc20Balance(anvil.rpcUrl, 8453, tusd, FRIEND)
      const sent = await blind.post('/v1/tx/sign-and-send', { intent: i, approvalTokenId: approved.body.approvalTokenId })
      expect(sent.status).toBe(200)
      await waitFor(async () => ((await blind.get(`/v1/tx/${sent.body.txHash}`)).status === 200 ? true : null), { what: 'the receipt' })
      expect((await erc20Balance(anvil.rpcUrl, 8453, tusd, FRIEND)) - before).toBe(1_000_000n)
    } finally {
      await blind.stop()
      proxy.server.close()
    }
  })
})

describe('fail before the operator is asked', () => {
  it('approve-request for a chain without RPC is 502 no_rpc_client and nothing is pending', async () => {
    const onOptimism = intentFor(WALLET, { type: 'transfer_native', to: FRIEND, amount: '1' }, { chainId: 10 })
    const r = await stack.post('/v1/tx/approve-request', onOptimism)
    expect(r).toEqual({ status: 502, body: { error: 'no_rpc_client', message: expect.stringContaining('chain 10') } })
    expect(await pendingIds()).not.toContain(onOptimism.id)
  })

  it('approve-request whose estimated gas cost already exceeds maxGasWei is 403 naming both numbers, and nothing is pending; preflight warns', async () => {
    // A native transfer needs approval under the default threshold: without the check it would reach the operator.
    const cheap = intent({ type: 'transfer_native', to: FRIEND, amount: '1' }, { maxGasWei: '1000' })
    const pre = await stack.post('/v1/tx/preflight', cheap)
    expect(pre.status).toBe(200)
    expect(pre.body.gasCost).toMatchObject({ gas: '21000', maxGasWei: '1000', withinLimit: false })
    const text = `estimated gas cost ${pre.body.gasCost.costWei} wei (gas 21000 at max fee ${pre.body.gasCost.maxFeePerGas} wei) exceeds constraints.maxGasWei 1000 wei`
    expect(pre.body.warnings).toContain(text)
    const r = await stack.post('/v1/tx/approve-request', cheap)
    expect(r).toEqual({ status: 403, body: { error: 'policy_denied', decision: 'deny', reasons: [text], policyVersion: '1' } })
    expect(await pendingIds()).not.toContain(cheap.id)
    // With room for the gas, the same transfer does wait for the operator.
    const roomy = intent({ type: 'transfer_native', to: FRIEND, amount: '1' })
    const waiting = stack.post('/v1/tx/approve-request', roomy)
    const p = await pendingRequest(stack, roomy)
    await stack.decide(p.requestId, false)
    expect((await waiting).body).toMatchObject({ approved: false })
  })
})

describe("the policy's own ceiling on fees (maxGasCostWei)", () => {
  it('holds whatever maxGasWei the intent names: approve-request refuses before any operator is asked, sign-and-send before the signer', async () => {
    const thrifty = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000, maxGasCostWei: '1000' } })
    await importKey(thrifty.dataDir, owner.privateKey)
    await thrifty.start({ approver: true })
    try {
      const native = intent({ type: 'transfer_native', to: FRIEND, amount: '1' }, { maxGasWei: parseEther('1000').toString() })
      const asked = await thrifty.post('/v1/tx/approve-request', native)
      expect(asked.status).toBe(403)
      expect(asked.body).toMatchObject({ error: 'policy_denied', reasons: [expect.stringMatching(/^estimated gas cost \d+ wei exceeds the policy's maxGasCostWei of 1000 wei$/)] })
      expect((await thrifty.get('/v1/approvals/pending')).body.pending).toEqual([])
      const sent = await thrifty.post('/v1/tx/sign-and-send', { intent: intent(transfer(FRIEND, TUSD(1)), { maxGasWei: parseEther('1000').toString() }) })
      expect(sent.status).toBe(403)
      expect(sent.body).toMatchObject({ error: 'policy_denied', reasons: [expect.stringMatching(/^gas cost \d+ wei exceeds the policy's maxGasCostWei of 1000 wei$/)] })
      const history = (await thrifty.get('/v1/approvals/history?limit=50')).body.events as Array<{ event: string; data: { reason?: string } }>
      expect(history.filter((e) => e.event === 'signature_created')).toEqual([])
      expect(history.some((e) => e.event === 'signing_denied' && e.data.reason === 'gas_cost_exceeds_policy')).toBe(true)
    } finally {
      await thrifty.stop()
    }
  })
})

describe('dev keys: the signer decides by itself', () => {
  /** A signer holding only the dev launcher's throwaway key, configured as start.mjs configures it, or not. */
  async function devSigner(devChainId: string | null, tamper: (keyFile: string) => void = () => {}) {
    const dataDir = tempDataDir()
    const { ensureDevKey }: typeof import('../scripts/dev-stack.mjs') = await import(path.join(repoRoot, 'scripts/dev-stack.mjs'))
    const key = await ensureDevKey({ root: repoRoot, dataDir, log: () => undefined })
    tamper(path.join(key.keystoreDir, `${key.address.toLowerCase()}.json`))
    const signer = new Stack({
      dataDir,
      env: {
        SERVICE_KEYSTORE_DIR: key.keystoreDir,
        SERVICE_DEMO_PASSPHRASE: readFileSync(key.passFile, 'utf8').trim(),
        ...(devChainId ? { SERVICE_SIGNER_DEV_CHAIN_ID: devChainId } : {}),
      },
    })
    await signer.startSigner()
    // The keystore lists a key's address as a string: the 0x address it was saved under.
    return { signer, wallet: key.address as Address }
  }
  const refusalOf = (p: Promise<unknown>) =>
    p.then(
      () => 'signed',
      (err: unknown) => ((err as RpcError).data as { reason?: string } | undefined)?.reason ?? String(err),
    )

  it('a chain-1 intent for the dev key, sent straight to the signer socket, is refused; its own dev chain signs', async () => {
    const { signer, wallet } = await devSigner('8453')
    try {
      const toBob = (chainId: 1 | 8453): TxIntent => intentFor(wallet, { type: 'transfer_native', to: FRIEND, amount: '0' }, { chainId })
      expect(await refusalOf(signDirectly(toBob(1), signer, 0))).toBe('dev_key_on_remote_chain')
      // The gateway's old flag is refused as an unknown parameter, not obeyed.
      const i = toBob(1)
      const client = createRpcClient({ socketPath: path.join(signer.dataDir, 'run', SIGNER_SOCKET) })
      const withFlag = client.call('sign', { intent: i, txRequest: buildTransaction(i, defaultRouterTable()).txRequest, nonce: 0, gas: '21000', maxFeePerGas: '1', maxPriorityFeePerGas: '1', localChain: true })
      await expect(withFlag).rejects.toThrow(/localChain/)
      client.close()
      expect(await refusalOf(signDirectly(toBob(8453), signer, 0))).toBe('signed')
    } finally {
      await signer.stop()
    }
  })

  it('a dev key whose "dev": true was deleted from its file does not sign for chain 1: its file no longer opens, and the signer says so', async () => {
    const stripDev = (file: string) => {
      const { dev, ...rest } = JSON.parse(readFileSync(file, 'utf8')) as { dev?: boolean }
      expect(dev).toBe(true)
      writeFileSync(file, JSON.stringify(rest))
    }
    let started: Awaited<ReturnType<typeof devSigner>> | null = null
    let failure = ''
    try {
      started = await devSigner('8453', stripDev)
    } catch (err) {
      failure = String(err)
    }
    try {
      if (started) {
        const i = intentFor(started.wallet, { type: 'transfer_native', to: FRIEND, amount: '0' }, { chainId: 1 })
        expect(await refusalOf(signDirectly(i, started.signer, 0))).not.toBe('signed')
      }
      expect(started).toBeNull()
      expect(failure).toMatch(/cannot unlock key 0x[0-9a-fA-F]{40} \(.*\): wrong passphrase, or the file was altered/)
    } finally {
      await started?.signer.stop()
    }
  })

  it('without a dev chain in its configuration the signer lets a dev key sign nothing', async () => {
    const { signer, wallet } = await devSigner(null)
    try {
      const i = intentFor(wallet, { type: 'transfer_native', to: FRIEND, amount: '0' }, { chainId: 8453 })
      expect(await refusalOf(signDirectly(i, signer, 0))).toBe('dev_key_on_remote_chain')
    } finally {
      await signer.stop()
    }
  })
})
