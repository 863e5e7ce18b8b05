// Issue 17: the signer group-commits (one fsync of signer.db and one of
// audit.db, with one audit checkpoint, for the signatures that arrive
// together). Nothing of that may cost durability: a signer SIGKILLed the
// instant a reply arrives, under 8 concurrent clients, must come back with
// every signature it replied, every approval token those consumed, and the
// signature's audit event, and the audit chain and checkpoint still verify.
// The real signer process over its sockets; no gateway (nothing else writes).
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  buildTransaction,
  createRpcClient,
  defaultRouterTable,
  GRANT_SOCKET,
  intentHash,
  normalizeIntent,
  SIGNER_SOCKET,
  type GrantResult,
  type RpcClient,
  type SignResult,
  type TxIntent,
} from '@countersign/shared'
import type { Address } from 'viem'
import { anvilAccounts } from './support/anvil.js'
import { BOB, intentFor } from './support/intents.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[2]!
const WALLET = owner.address as Address
const routers = defaultRouterTable()
/** Above this many wei the policy requires an approval token: every other intent below carries one. */
const APPROVAL_ABOVE = 10_000
const CLIENTS = 8

let stack: Stack

interface Replied {
  intent: TxIntent
  txHash: string
  tokenId: string | null
}

const socket = (name: string) => path.join(stack.dataDir, 'run', name)

/** A transfer; odd ones are above the approval threshold and get a token minted over grant.sock first. */
async function prepared(n: number, grants: RpcClient): Promise<{ intent: TxIntent; tokenId: string | null }> {
  const needsToken = n % 2 === 1
  const intent = intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: String(needsToken ? APPROVAL_ABOVE + n : 1 + n) })
  if (!needsToken) return { intent, tokenId: null }
  const { txRequestHash } = buildTransaction(intent, routers)
  const grant = await grants.call<GrantResult>('grantApproval', { txRequestHash, intentHash: intentHash(normalizeIntent(intent)), intentId: intent.id })
  return { intent, tokenId: grant.approvalTokenId }
}

/**
 * CLIENTS clients sign continuously (each its own connection) until `replies`
 * replies arrived; the signer is SIGKILLed synchronously inside the callback
 * of that reply, so the replies of the rest of its batch may or may not have
 * left. Returns every reply that did arrive; the calls cut off just fail.
 */
async function signUntilKilled(replies: number, firstNonce: number): Promise<{ replied: Replied[]; maxSignaturesPerFsync: number }> {
  const grants = createRpcClient({ socketPath: socket(GRANT_SOCKET) })
  const clients = Array.from({ length: CLIENTS }, () => createRpcClient({ socketPath: socket(SIGNER_SOCKET) }))
  const replied: Replied[] = []
  let nonce = firstNonce
  let killed = false
  let maxSignaturesPerFsync = 0
  try {
    const work = Array.from({ length: 60 }, (_, n) => prepared(nonce + n, grants))
    const ready = await Promise.all(work)
    let next = 0
    await Promise.all(
      clients.map(async (client) => {
        while (!killed && next < ready.length) {
          const { intent, tokenId } = ready[next++]!
          const call = { intent, txRequest: buildTransaction(intent, routers).txRequest, nonce: nonce++, gas: '21000', maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000', ...(tokenId ? { approvalTokenId: tokenId } : {}) }
          let result: SignResult
          try {
            result = await client.call<SignResult>('sign', call)
          } catch (err) {
            if (killed) return
            throw err
          }
          if (killed) return // arrived after the kill: not counted, though it was replied
          replied.push({ intent, txHash: result.txHash, tokenId })
          if (replied.length === Math.floor(replies / 2)) {
            // Half way: group commit is happening (more than one signature shared an fsync).
            const health = await clients[0]!.call<{ durability: { signerDb: { waitersPerSync: Record<string, number> } } }>('health', {})
            maxSignaturesPerFsync = Math.max(...Object.keys(health.durability.signerDb.waitersPerSync).map(Number))
          }
          if (replied.length >= replies) {
            killed = true
            stack.signer.child.kill('SIGKILL')
            return
          }
        }
      }),
    )
  } finally {
    grants.close()
    for (const c of clients) c.close()
  }
  return { replied, maxSignaturesPerFsync }
}

beforeAll(async () => {
  stack = new Stack({ policy: { maxTxPerHour: 100_000, requireApprovalAbove: { valueWei: String(APPROVAL_ABOVE) } } })
  expect(await importKey(stack.dataDir, owner.privateKey)).toBe(WALLET)
  await stack.startSigner()
}, 120_000)

afterAll(async () => {
  await stack?.stop()
})

describe('group commit under SIGKILL', () => {
  it('every signature and token consumption replied before a SIGKILL under 8 concurrent clients is there after restart, with its audit event; verify passes', async () => {
    const all: Replied[] = []
    let nonce = 0
    let maxBatch = 0
    for (const replies of [25, 40, 33]) {
      const { replied, maxSignaturesPerFsync } = await signUntilKilled(replies, nonce)
      nonce += 200
      expect(replied.length).toBe(replies)
      maxBatch = Math.max(maxBatch, maxSignaturesPerFsync)
      await stack.signer.exited()
      all.push(...replied)

      // Read the files the killed process left, before anything restarts.
      const db = new Database(path.join(stack.dataDir, 'signer.db'), { readonly: true })
      const audit = new Database(path.join(stack.dataDir, 'audit.db'), { readonly: true })
      try {
        const sig = db.prepare<[string], { tx_hash: string; token_id: string | null }>('SELECT tx_hash, token_id FROM signatures WHERE intent_id = ?')
        const token = db.prepare<[string], { consumed_at: number | null }>('SELECT consumed_at FROM approval_tokens WHERE id = ?')
        const events = audit.prepare<[], { intent_id: string; data: string }>("SELECT intent_id, data FROM audit_events WHERE event = 'signature_created'").all()
        const auditedTx = new Set(events.map((e) => (JSON.parse(e.data) as { txHash: string }).txHash))
        for (const r of replied) {
          expect(sig.get(r.intent.id), `signature of ${r.intent.id}`).toEqual({ tx_hash: r.txHash, token_id: r.tokenId })
          if (r.tokenId) expect(token.get(r.tokenId)?.consumed_at, `token ${r.tokenId} consumed`).toEqual(expect.any(Number))
          expect(auditedTx.has(r.txHash), `audit event of ${r.txHash}`).toBe(true)
        }
      } finally {
        db.close()
        audit.close()
      }
      await stack.startSigner()
    }
    expect(all.some((r) => r.tokenId !== null)).toBe(true)
    // More than one signature shared an fsync at least once: this test ran against group commit.
    expect(maxBatch).toBeGreaterThan(1)

    // After the restarts: each replied intent signed again gets the same transaction back, nothing new.
    const client = createRpcClient({ socketPath: socket(SIGNER_SOCKET) })
    try {
      for (const r of all.slice(0, 20)) {
        const again = await client.call<SignResult>('sign', { intent: r.intent, txRequest: buildTransaction(r.intent, routers).txRequest, nonce: 999_999, gas: '21000', maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000' })
        expect(again).toMatchObject({ txHash: r.txHash, repeated: true })
      }
    } finally {
      client.close()
    }
    expect(await stack.auditVerify()).toMatch(/^audit chain OK: \d+ events, \d+ signed checkpoints/)
  }, 180_000)
})
