// The signer trusts nobody, the gateway included: here a compromised gateway
// sends the real signer thousands of mutated `sign` calls over signer.sock
// (intents and transactions that disagree, tokens moved between intents,
// values above the policy, odd types everywhere), seeded like
// fuzz.system.test.ts (FUZZ_SEED replays a run). Whatever it sends:
// - every answer is a signature or a refusal (SIGNING_REFUSED, or invalid
//   params / request), never an internal error, and the signer stays up;
// - every signature is of the transaction the intent describes (to, value,
//   data, chain), by the intent's wallet, at the asked nonce unless it is the
//   stored one of a repeat;
// - no signature above the policy's maximum, and none needing approval
//   without a token granted for exactly that intent, each token spent once;
// - the audit chain verifies afterwards.
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, parseTransaction, parseUnits, recoverTransactionAddress, type Hex, type TransactionSerialized } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import {
  buildTransaction,
  createRpcClient,
  defaultRouterTable,
  GRANT_SOCKET,
  intentHash,
  normalizeIntent,
  SIGNER_SOCKET,
  SIGNING_REFUSED,
  UNLIMITED_APPROVAL,
  type GrantResult,
  type RpcClient,
  type SignResult,
  type TxIntent,
} from '@countersign/shared'
import { BASE_ROUTER, BASE_USDC, clone, FUZZ_RECIPIENT, fuzzSettings, mutate, oddValues, rpcOutcome, seededRandom } from './support/fuzz.js'
import { intentFor } from './support/intents.js'
import { importKey, Stack } from './support/stack.js'

const { seed: SEED, rounds: ROUNDS } = fuzzSettings(3000)

const key = generatePrivateKey()
const WALLET = privateKeyToAccount(key).address
const BOB = FUZZ_RECIPIENT
const USDC = BASE_USDC
const ROUTER = BASE_ROUTER
const MAX_VALUE = parseEther('1')
const APPROVAL_ABOVE = parseEther('0.01')
// The policy's own line for an unlimited allowance.
const UNLIMITED = UNLIMITED_APPROVAL

let stack: Stack
let signer: RpcClient
let grants: RpcClient

type SignParams = Record<string, unknown> & { intent: TxIntent }

function params(intent: TxIntent, nonce: number, approvalTokenId?: string): SignParams {
  const built = buildTransaction(normalizeIntent(intent), defaultRouterTable())
  return {
    intent,
    txRequest: built.txRequest,
    nonce,
    gas: '100000',
    maxFeePerGas: '2000000000',
    maxPriorityFeePerGas: '1000000000',
    ...(approvalTokenId ? { approvalTokenId } : {}),
  }
}

/** A token from the approver's socket for exactly this intent (as the approver would after an operator said yes). */
async function grant(intent: TxIntent): Promise<string> {
  const normal = normalizeIntent(intent)
  const built = buildTransaction(normal, defaultRouterTable())
  const r = await grants.call<GrantResult>('grantApproval', { txRequestHash: built.txRequestHash, intentHash: intentHash(normal), intentId: intent.id })
  return r.approvalTokenId
}

/** Why a signature for these params needs an operator's token by the policy here, or null. */
function needsApproval(intent: TxIntent): string | null {
  const a = intent.action as { type: string; amount?: string }
  if (a.type === 'transfer_native' && BigInt(a.amount!) > APPROVAL_ABOVE) return 'native value above the approval threshold'
  if (a.type === 'approve' && BigInt(a.amount!) >= UNLIMITED) return 'unlimited approve'
  return null
}

beforeAll(async () => {
  stack = new Stack({
    policy: { maxTxPerHour: 1_000_000, maxValueWei: MAX_VALUE.toString(), requireApprovalAbove: { valueWei: APPROVAL_ABOVE.toString() } },
  })
  await importKey(stack.dataDir, key)
  await stack.startSigner()
  signer = createRpcClient({ socketPath: path.join(stack.dataDir, 'run', SIGNER_SOCKET), timeoutMs: 30_000 })
  grants = createRpcClient({ socketPath: path.join(stack.dataDir, 'run', GRANT_SOCKET), timeoutMs: 30_000 })
}, 60_000)

afterAll(async () => {
  signer?.close()
  grants?.close()
  await stack?.stop()
})

/** Every address in `value` (0x and 40 hex digits) in upper case only. */
function addressesInUpperCase(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value), (_key, v: unknown) => (typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v) ? `0x${v.slice(2).toUpperCase()}` : v))
}

describe(`signer.sock under a compromised gateway's fuzzed sign calls (seed ${SEED})`, () => {
  it(`${ROUNDS} mutated sign calls: only refusals or signatures of what the intent says, within policy, each token once`, async () => {
    const rng = seededRandom(SEED)
    const small = parseEther('0.001').toString()
    const tokensGranted = new Map<string, Hex>() // token -> intentHash it was granted for
    const tokenSpentBy = new Map<string, string>() // token -> intent id of the first new signature that used it
    const outcomes = new Map<string, number>()
    const problems: string[] = []
    let nonce = 0

    const freshSeeds = async (): Promise<SignParams[]> => {
      const intents = [
        intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: small }),
        intentFor(WALLET, { type: 'transfer', asset: USDC, to: BOB, amount: parseUnits('5', 6).toString() } as never),
        intentFor(WALLET, { type: 'approve', asset: USDC, spender: ROUTER, amount: parseUnits('5', 6).toString() } as never),
        intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: parseEther('0.5').toString() }),
        intentFor(WALLET, { type: 'approve', asset: USDC, spender: ROUTER, amount: (2n ** 256n - 1n).toString() } as never),
        intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: parseEther('3').toString() }),
      ]
      const seeds: SignParams[] = []
      for (const intent of intents) {
        let token: string | undefined
        if (needsApproval(intent) && BigInt((intent.action as { amount: string }).amount) <= MAX_VALUE * 10n ** 60n) {
          token = await grant(intent)
          tokensGranted.set(token, intentHash(normalizeIntent(intent)))
        }
        seeds.push(params(intent, nonce++, token))
      }
      return seeds
    }

    let seeds = await freshSeeds()
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 100 === 0) seeds = await freshSeeds()
      const base = rng.pick(seeds)
      // Some as they are (repeats of a signed intent among them), the rest mutated; a fresh id for most so that the intent is new.
      let sent: unknown = rng.chance(0.15) ? clone(base) : mutate(rng, rng.chance(0.6) ? { ...clone(base), intent: { ...clone(base.intent), id: crypto.randomUUID() } } : clone(base), seeds)
      if (rng.chance(0.03)) sent = clone(rng.pick(oddValues))
      // Valid EIP-55 that viem refuses: the gateway normalises it, a compromised one need not (found by review).
      if (rng.chance(0.1)) sent = addressesInUpperCase(sent)
      if (sent && typeof sent === 'object' && !Array.isArray(sent) && rng.chance(0.5)) (sent as Record<string, unknown>).nonce = nonce++
      const what = `seed ${SEED} round ${round}: sign ${JSON.stringify(sent).slice(0, 1500)}`
      try {
        const result = await signer.call<SignResult>('sign', sent)
        outcomes.set(result.repeated ? 'repeated' : 'signed', (outcomes.get(result.repeated ? 'repeated' : 'signed') ?? 0) + 1)
        const p = sent as SignParams
        const expected = buildTransaction(normalizeIntent(p.intent), defaultRouterTable()).txRequest
        const tx = parseTransaction(result.signedTx)
        const from = await recoverTransactionAddress({ serializedTransaction: result.signedTx as TransactionSerialized })
        const wrong: string[] = []
        if (from !== WALLET) wrong.push(`signed by ${from}`)
        if (tx.to?.toLowerCase() !== expected.to.toLowerCase()) wrong.push(`to ${tx.to}, the intent says ${expected.to}`)
        if ((tx.data ?? '0x') !== expected.data) wrong.push('calldata other than the intent\'s')
        if ((tx.value ?? 0n).toString() !== expected.value) wrong.push(`value ${tx.value}, the intent says ${expected.value}`)
        if (tx.chainId !== p.intent.chain.chainId) wrong.push(`chain ${tx.chainId}, the intent says ${p.intent.chain.chainId}`)
        if ((tx.value ?? 0n) > MAX_VALUE) wrong.push(`value ${tx.value} above the policy maximum`)
        if (!result.repeated) {
          if (tx.nonce !== p.nonce) wrong.push(`nonce ${tx.nonce}, asked ${p.nonce}`)
          const why = needsApproval(p.intent)
          if (why) {
            const token = p.approvalTokenId as string | undefined
            if (!token || tokensGranted.get(token) !== intentHash(normalizeIntent(p.intent))) wrong.push(`${why} signed without a token granted for this intent`)
            else if (tokenSpentBy.has(token) && tokenSpentBy.get(token) !== p.intent.id) wrong.push(`token ${token} spent a second time`)
            else tokenSpentBy.set(token, p.intent.id)
          }
        }
        if (wrong.length > 0) problems.push(`${what}\n  ${wrong.join('; ')}`)
      } catch (e) {
        const key = rpcOutcome(e, SIGNING_REFUSED)
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1)
        if (key.startsWith('other')) problems.push(`${what}\n  answered ${key}`)
      }
      if (problems.length >= 20) break
    }
    console.log(`signer fuzz seed ${SEED}: ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}`)
    expect(problems).toEqual([])
    // The mix reached every outcome that matters: signatures, refusals by policy and by token, schema refusals.
    expect(outcomes.get('signed') ?? 0).toBeGreaterThan(ROUNDS / 50)
    expect(outcomes.get('invalid params') ?? 0).toBeGreaterThan(ROUNDS / 10)
    expect(outcomes.get('refused: tx_mismatch') ?? 0).toBeGreaterThan(0)
    expect(outcomes.get('refused: policy_deny') ?? 0).toBeGreaterThan(0)
    expect((outcomes.get('refused: missing_approval_token') ?? 0) + (outcomes.get('refused: invalid_approval_token') ?? 0)).toBeGreaterThan(0)

    expect(stack.signer.child.exitCode).toBeNull()
    expect(await signer.call<Array<{ address: string }>>('accounts', {})).toEqual([expect.objectContaining({ address: WALLET })])
    expect(await stack.auditVerify()).toMatch(/^audit chain OK: \d+ events/)
  }, 600_000)
})
