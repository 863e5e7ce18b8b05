// DESIGN §6 "crash window": when the gateway never sees the signer's answer to
// `sign`, the nonce it gave may go to the next intent, and the first intent's
// stored signature can then never be mined. A retry must still get that intent
// mined, exactly once, at a fresh nonce, with no nonce gap and nothing stuck.
// Real signer and gateway processes, real anvil, SIGKILL.
import path from 'node:path'
import { watch } from 'node:fs'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address, type Hex } from 'viem'
import { buildTransaction, createRpcClient, defaultRouterTable, SIGNER_SOCKET, type SignResult, type TxIntent } from '@countersign/shared'
import { anvilAccounts, rpc, startAnvil, type Anvil } from './support/anvil.js'
import { BOB, intentFor } from './support/intents.js'
import { waitFor } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[3]
const WALLET = owner.address as Address

let chain: Anvil
let stack: Stack

/** A native transfer of `wei` to BOB: the value tells the intents' transactions apart on chain. */
const transfer = (wei: number): TxIntent => intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: String(wei) }, { maxGasWei: parseEther('0.01').toString() })

interface MinedTx {
  hash: Hex
  nonce: number
  value: bigint
}

/** Every transaction from WALLET in every block so far. */
async function minedFromWallet(): Promise<MinedTx[]> {
  const latest = Number(await rpc<string>(chain.rpcUrl, 'eth_blockNumber'))
  const found: MinedTx[] = []
  for (let n = 0; n <= latest; n++) {
    const block = await rpc<{ transactions: Array<{ hash: Hex; from: string; nonce: string; value: string }> }>(chain.rpcUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, true])
    for (const tx of block.transactions) {
      if (tx.from.toLowerCase() === WALLET.toLowerCase()) found.push({ hash: tx.hash, nonce: Number(tx.nonce), value: BigInt(tx.value) })
    }
  }
  return found
}

const nonceOf = (tag: 'latest' | 'pending') => rpc<string>(chain.rpcUrl, 'eth_getTransactionCount', [WALLET, tag]).then(Number)
const receiptOf = (hash: string) => rpc<{ status: string } | null>(chain.rpcUrl, 'eth_getTransactionReceipt', [hash])

/**
 * sign-and-send until it answers 200 with the transaction broadcast (a restarted signer may still be unlocking, a
 * killed gateway not listening yet). An intent whose stored signature was lost to another transaction at its nonce
 * is signed again only once that transaction's block is safe (anvil counts 32 blocks back: mined here) and with an
 * operator's approval (the approver runs in auto mode here), as any client would go on.
 */
async function sendUntilBroadcast(i: TxIntent): Promise<{ txHash: Hex }> {
  let approvalTokenId: string | undefined
  return waitFor(
    async () => {
      let r: { status: number; body: any }
      try {
        r = await stack.post('/v1/tx/sign-and-send', { intent: i, ...(approvalTokenId ? { approvalTokenId } : {}) })
        if (r.status === 502 && String(r.body.message).includes('does not count as safe yet')) {
          await rpc(chain.rpcUrl, 'anvil_mine', ['0x20'])
          return null
        }
        if (r.status === 403 && r.body.error === 'approval_required') {
          const approved = await stack.post('/v1/tx/approve-request', i)
          if (approved.status === 200 && approved.body.approvalTokenId) approvalTokenId = approved.body.approvalTokenId
          else if (approved.status !== 503) throw new Error(`approve-request: unexpected ${approved.status}: ${JSON.stringify(approved.body)}`)
          return null
        }
      } catch (err) {
        if (err instanceof Error && err.message.startsWith('approve-request:')) throw err
        return null // no answer: the gateway was killed under this request, or is not back yet
      }
      if (r.status === 200 && r.body.broadcast === true) return r.body as { txHash: Hex }
      if (r.status !== 503 && r.status !== 200) throw new Error(`unexpected ${r.status}: ${JSON.stringify(r.body)}`)
      return null
    },
    { timeoutMs: 120_000, intervalMs: 300, what: `intent ${i.id} to be signed and broadcast` },
  )
}

/**
 * SIGKILLs `victim` from inside the inotify callback of the write to
 * signer.db-wal that commits the signer's next signature (other writes, such
 * as its checkpoint records, are let through): the signature is stored, the
 * answer not yet sent, as the signer still has the audit event and two more
 * commits to make before it replies; the gateway has not seen it.
 */
function killOnNextSignature(victim: 'signer' | 'gateway', giveUp: () => boolean): Promise<void> {
  const db = new Database(path.join(stack.dataDir, 'signer.db'), { readonly: true })
  const count = db.prepare('SELECT COUNT(*) AS n FROM signatures')
  const stored = () => (count.get() as { n: number }).n
  const before = stored()
  return new Promise((resolve) => {
    const watcher = watch(path.join(stack.dataDir, 'signer.db-wal'), () => {
      if (stored() === before) return
      stack[victim].child.kill('SIGKILL')
      stop()
    })
    const poll = setInterval(() => giveUp() && stop(), 100)
    const stop = () => {
      watcher.close()
      clearInterval(poll)
      db.close()
      resolve()
    }
  })
}

/** Every audit event, read from audit.db itself (the history endpoint returns 100 at most). */
function auditOf(): Array<{ event: string; intentId: string; data: Record<string, unknown> }> {
  const db = new Database(path.join(stack.dataDir, 'audit.db'), { readonly: true })
  try {
    return db
      .prepare<[], { event: string; intent_id: string; data: string }>('SELECT event, intent_id, data FROM audit_events ORDER BY seq')
      .all()
      .map((r) => ({ event: r.event, intentId: r.intent_id, data: JSON.parse(r.data) as Record<string, unknown> }))
  } finally {
    db.close()
  }
}

beforeAll(async () => {
  chain = await startAnvil({ chainId: 8453 })
  stack = new Stack({
    rpcUrls: { 8453: chain.rpcUrl },
    policy: { maxTxPerHour: 10_000, requireApprovalAbove: { valueWei: parseEther('1').toString() } },
    // A replacement needs an operator's approval whatever policy says: here the approver grants it at once.
    env: { SERVICE_APPROVAL_MODE: 'auto' },
  })
  expect(await importKey(stack.dataDir, owner.privateKey)).toBe(WALLET)
  await stack.start({ approver: true })
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  await chain?.stop()
})

describe('the crash window', () => {
  it('an intent signed directly on signer.sock (the gateway never saw the reply), whose nonce another intent then took, is still mined on retry', async () => {
    const a = transfer(1_000_001)
    const nonce = await nonceOf('pending')
    // What the gateway would have sent, had it not lost the reply.
    const signer = createRpcClient({ socketPath: path.join(stack.dataDir, 'run', SIGNER_SOCKET) })
    let lost: SignResult
    try {
      lost = await signer.call<SignResult>('sign', {
        intent: a,
        txRequest: buildTransaction(a, defaultRouterTable()).txRequest,
        nonce,
        gas: '21000',
        maxFeePerGas: '20000000000',
        maxPriorityFeePerGas: '1000000000',
      })
    } finally {
      signer.close()
    }
    expect(lost.nonce).toBe(nonce)

    // The gateway knows nothing of it: the next intent gets the same nonce, and is mined.
    const b = await sendUntilBroadcast(transfer(1_000_002))
    await waitFor(() => receiptOf(b.txHash), { what: 'b mined' })
    expect((await minedFromWallet()).find((t) => t.hash === b.txHash)?.nonce).toBe(nonce)

    // Retrying the first intent: its stored signature can never be mined, so it is replaced: once B's block is
    // safe, and with an operator's approval.
    const early = await stack.post('/v1/tx/sign-and-send', { intent: a })
    expect(early).toMatchObject({ status: 502, body: { error: 'rpc_error', message: expect.stringContaining('does not count as safe yet') } })
    await rpc(chain.rpcUrl, 'anvil_mine', ['0x20'])
    expect(await stack.post('/v1/tx/sign-and-send', { intent: a })).toMatchObject({ status: 403, body: { error: 'approval_required' } })
    const retried = await sendUntilBroadcast(a)
    expect(retried.txHash).not.toBe(lost.txHash)
    const mined = await waitFor(() => receiptOf(retried.txHash), { what: 'a mined' })
    expect(mined.status).toBe('0x1')
    expect(await receiptOf(lost.txHash)).toBeNull()
    expect((await minedFromWallet()).find((t) => t.hash === retried.txHash)?.nonce).toBe(nonce + 1)
    expect(await nonceOf('pending')).toBe(nonce + 2)

    const replaced = auditOf().filter((e) => e.intentId === a.id && e.event === 'signature_replaced')
    expect(replaced).toHaveLength(1)
    expect(replaced[0]!.data).toMatchObject({ txHash: retried.txHash, replacedTxHash: lost.txHash, nonce: nonce + 1, replacedNonce: nonce })
    // A further retry returns the same mined transaction, nothing new.
    expect((await sendUntilBroadcast(a)).txHash).toBe(retried.txHash)
    expect(await stack.auditVerify()).toMatch(/^audit chain OK: \d+ events, \d+ signed checkpoints/)
  })

  it('SIGKILL of the signer at random points during 100 concurrent sign-and-sends on one wallet: each intent mined exactly once, nonces contiguous, none stuck, verify passes', async () => {
    const { intents, kills, seed, victimLines } = await underRandomKills('signer', 2_000_000)
    const ids = new Set(intents.map((i) => i.id))
    const events = auditOf().filter((e) => ids.has(e.intentId))
    const late = events.filter((e) => e.event === 'signature_created' && e.data.late === true).length
    // What each restarted signer found: signatures whose audited flag (set after the event's fsync,
    // just before the answer) a kill cut off; their event missing (audited late) or already in the log.
    const recovered = [...victimLines, ...stack.signer.lines]
      .flatMap((l) => (l.includes('signatures a crash left without their audited flag') ? [JSON.parse(l) as { auditedLate: number; alreadyInLog: number }] : []))
      .reduce((sum, r) => ({ late: sum.late + r.auditedLate, logged: sum.logged + r.alreadyInLog }), { late: 0, logged: 0 })
    console.log(`crash window run (signer): seed ${seed}, ${kills} kills, ${late} signatures audited late, ${recovered.logged} unflagged with their event logged`)
    // The kills did land between a signature's commit and its answer.
    expect(recovered.late + recovered.logged, `seed ${seed}`).toBeGreaterThan(0)
    expect(recovered.late).toBe(events.filter((e) => (e.event === 'signature_created' || e.event === 'signature_replaced') && e.data.late === true).length)
  }, 300_000)

  // The gateway holds the wallet's queue and picks nonces: killed with a
  // signature stored but not yet broadcast (or broadcast, its answer lost),
  // its restart must still get every intent mined once, with no nonce gap.
  it('SIGKILL of the gateway at random points during 100 concurrent sign-and-sends on one wallet: each intent mined exactly once, nonces contiguous, none stuck, verify passes', async () => {
    const { kills, seed } = await underRandomKills('gateway', 3_000_000)
    console.log(`crash window run (gateway): seed ${seed}, ${kills} kills`)
  }, 300_000)
})

/**
 * 100 clients send 100 native transfers (values from `base`) on one wallet
 * at once, each retrying until broadcast, while `victim` is SIGKILLed at
 * random moments (half of them the instant the signer stores a signature)
 * and restarted; then checks that each intent was mined exactly once, as the
 * transaction its last retry returned (and a further retry returns again),
 * nonces contiguous and nothing pending, every replacement ending at a mined
 * transaction, no signature audited twice, and the audit chain verifying.
 */
async function underRandomKills(victim: 'signer' | 'gateway', base: number) {
  const before = await minedFromWallet()
  const firstNonce = await nonceOf('latest')
  const intents = Array.from({ length: 100 }, (_, n) => transfer(base + n))
  let done = 0
  const drivers = Promise.all(intents.map((i) => sendUntilBroadcast(i).finally(() => (done += 1))))
  const seed = Date.now()
  let state = seed % 2147483648
  const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648
  let kills = 0
  const victimLines: string[] = []
  while (done < intents.length && kills < 8) {
    if (kills % 2 === 0) {
      // A random moment soon after the start, while the queue is signing.
      await new Promise((r) => setTimeout(r, 10 + random() * 250))
    } else {
      // The instant the signer next commits a signature, before its answer reaches the gateway.
      await killOnNextSignature(victim, () => done >= intents.length)
    }
    if (done >= intents.length) break
    stack[victim].child.kill('SIGKILL')
    await stack[victim].exited()
    victimLines.push(...stack[victim].lines)
    kills += 1
    await (victim === 'signer' ? stack.startSigner() : stack.startGateway())
  }
  const finals = await drivers
  expect(kills, `seed ${seed}`).toBeGreaterThan(0)

  // With everything up again, retry every intent once more: the same transaction comes back, nothing is signed again.
  const again = await Promise.all(intents.map((i) => sendUntilBroadcast(i)))
  expect(again.map((r) => r.txHash)).toEqual(finals.map((f) => f.txHash))
  await Promise.all(finals.map((f) => waitFor(() => receiptOf(f.txHash), { what: `receipt of ${f.txHash}` })))

  const mined = (await minedFromWallet()).filter((t) => !before.some((b) => b.hash === t.hash))
  // Exactly one mined transaction per intent, and it is the one its last retry returned.
  const byValue = new Map<bigint, MinedTx[]>()
  for (const t of mined) byValue.set(t.value, [...(byValue.get(t.value) ?? []), t])
  for (const [n, i] of intents.entries()) {
    const txs = byValue.get(BigInt(i.action.type === 'transfer_native' ? i.action.amount : 0)) ?? []
    expect(txs.map((t) => t.hash), `intent ${n}, seed ${seed}`).toEqual([finals[n]!.txHash])
  }
  expect(mined).toHaveLength(100)
  // Nonces contiguous from where the run started; nothing left pending.
  expect(mined.map((t) => t.nonce).sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, n) => firstNonce + n))
  expect(await nonceOf('pending')).toBe(firstNonce + 100)
  expect(await nonceOf('latest')).toBe(firstNonce + 100)
  for (const f of finals) expect((await receiptOf(f.txHash))!.status).toBe('0x1')

  const ids = new Set(intents.map((i) => i.id))
  const events = auditOf().filter((e) => ids.has(e.intentId))
  // Nothing is audited twice: one signature_created or signature_replaced per signature.
  const signatureEvents = events.filter((e) => e.event === 'signature_created' || e.event === 'signature_replaced').map((e) => e.data.txHash)
  expect(new Set(signatureEvents).size).toBe(signatureEvents.length)
  // Each replacement names both transactions, and the replaced one was never mined. A replacement
  // can itself be lost to a later kill (signed, not yet broadcast) and replaced in turn: following
  // each chain of replacements ends at a mined transaction.
  const replacements = events.filter((x) => x.event === 'signature_replaced')
  const replacedBy = new Map(replacements.map((e) => [e.data.replacedTxHash as string, e.data.txHash as string]))
  for (const e of replacements) {
    expect(await receiptOf(e.data.replacedTxHash as string)).toBeNull()
    let last = e.data.txHash as string
    for (let hops = 0; replacedBy.has(last) && hops < replacements.length; hops++) last = replacedBy.get(last)!
    expect(mined.some((t) => t.hash === last), `replacement chain from ${e.data.replacedTxHash as string} ends at ${last}`).toBe(true)
  }
  expect(await stack.auditVerify()).toMatch(/^audit chain OK: \d+ events, \d+ signed checkpoints/)
  console.log(`  ${replacements.length} signatures replaced`)
  return { intents, kills, seed, victimLines }
}
