#!/usr/bin/env node
// npm run demo: a guided tour of the public API against the development stack
// started by `npm start`. It checks balances, sends a native transfer through
// approve-request (approved here with the operator token, or by you on the
// dashboard with --manual), an ERC-20 transfer, a swap on the local Uniswap
// v3 pool, then shows the receipts and the audit trail.
import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadEnvFile } from './env-file.mjs'

// The gateway's answers, as the API documents them (shared/src/server/wire.ts).
/**
 * @typedef {import('@countersign/shared').ApprovalResult} ApprovalResult
 * @typedef {import('@countersign/shared').Balance} Balance
 * @typedef {import('@countersign/shared').BuildResult} BuildResult
 * @typedef {import('@countersign/shared').HistoryResult} HistoryResult
 * @typedef {import('@countersign/shared').PendingApproval} PendingApproval
 * @typedef {import('@countersign/shared').PendingList} PendingList
 * @typedef {import('@countersign/shared').PreflightResult} PreflightResult
 * @typedef {import('@countersign/shared').Receipt} Receipt
 * @typedef {import('@countersign/shared').SignAndSendResult} SignAndSendResult
 * @typedef {{ status: number, body: unknown }} Answer
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
try {
  loadEnvFile(path.join(root, '.env'))
} catch (err) {
  // An OperatorError naming the file and line (env-file.mjs).
  process.stderr.write(`demo: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
}
const manual = process.argv.includes('--manual')
const dataDir = path.resolve(root, process.env.SERVICE_DATA_DIR || 'data')
const devFile = path.join(dataDir, 'dev-chain.json')
// SERVICE_PORT if given, else where npm start said its gateway is (dev-chain.json), else the default port.
const base = process.env.SERVICE_PORT ? `http://127.0.0.1:${process.env.SERVICE_PORT}` : (devGatewayUrl() ?? 'http://127.0.0.1:3100')

function devGatewayUrl() {
  try {
    const url = /** @type {{ gatewayUrl?: unknown }} */ (JSON.parse(readFileSync(devFile, 'utf8'))).gatewayUrl
    return typeof url === 'string' && /^http:\/\/127\.0\.0\.1:\d+$/.test(url) ? url : undefined
  } catch {
    return undefined
  }
}
const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
const FRIEND = '0x000000000000000000000000000000000000bEEF'

const bold = (/** @type {string} */ s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s)
const step = (/** @type {number} */ n, /** @type {string} */ title) => console.log(`\n${bold(`${n}. ${title}`)}`)
const show = (/** @type {string} */ label, /** @type {unknown} */ value) => console.log(`   ${label.padEnd(14)} ${typeof value === 'string' ? value : JSON.stringify(value)}`)

/**
 * Why fetch failed: the system call's code (ECONNREFUSED) when it names one, else the message.
 * @param {unknown} err
 * @returns {string}
 */
function fetchFailure(err) {
  if (!(err instanceof Error)) return String(err)
  const { cause } = err
  return cause && typeof cause === 'object' && 'code' in cause && typeof cause.code === 'string' ? cause.code : err.message
}

/**
 * @param {'GET' | 'POST'} method
 * @param {string} pathname
 * @param {object} [body] sent as JSON
 * @param {Record<string, string>} [headers]
 * @returns {Promise<Answer>}
 */
async function call(method, pathname, body, headers = {}) {
  let res
  try {
    res = await fetch(base + pathname, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    })
  } catch (err) {
    throw new Error(`cannot reach the gateway at ${base} (${fetchFailure(err)}): is npm start running? If it listens on another port, set SERVICE_PORT for the demo too`)
  }
  return { status: res.status, body: await res.json() }
}
/**
 * The body of a 200 answer; anything else throws, naming `what`. The caller
 * names the body's type, as the API documents it for that route.
 * @param {Answer} r
 * @param {string} what
 * @returns {unknown}
 */
const expectOk = (r, what) => {
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}${rateLimitHint(r.body)}`)
  return r.body
}

/**
 * Every intent built or sent for approval counts against maxTxPerHour (SPEC), declined or unsent ones too: a few demos reach 10.
 * @param {unknown} body an error answer
 * @returns {string}
 */
function rateLimitHint(body) {
  const reasons = body && typeof body === 'object' && 'reasons' in body ? body.reasons : undefined
  const limited = Array.isArray(reasons) && reasons.some((r) => typeof r === 'string' && r.startsWith('rate limit exceeded'))
  return limited
    ? '\n(every intent built or sent for approval in the last hour counts, declined or unsent ones too; wait, or raise maxTxPerHour in a policy file: SERVICE_POLICY_FILE, see README "Policy")'
    : ''
}

/**
 * @param {string} wallet
 * @param {object} action
 * @param {number} [slippage] maxSlippageBps
 */
function intent(wallet, action, slippage = 0) {
  const now = Math.floor(Date.now() / 1000)
  return {
    version: '1',
    id: randomUUID(),
    timestamp: now,
    chain: { type: 'evm', chainId: 8453 },
    wallet: { address: wallet },
    action,
    constraints: { maxGasWei: '5000000000000000', deadline: now + 600, maxSlippageBps: slippage },
    metadata: { source: 'countersign-demo' },
  }
}

/**
 * @param {string} hash
 * @returns {Promise<Receipt>}
 */
async function receipt(hash) {
  for (let i = 0; i < 100; i++) {
    const r = await call('GET', `/v1/tx/${hash}`)
    if (r.status === 200) return /** @type {Receipt} */ (r.body)
    await new Promise((res) => setTimeout(res, 200))
  }
  throw new Error(`no receipt for ${hash}`)
}

/**
 * @param {ReturnType<typeof intent>} i
 * @param {string} [approvalTokenId]
 * @returns {Promise<string>} the transaction's hash
 */
async function sendAndShow(i, approvalTokenId) {
  const sent = /** @type {SignAndSendResult} */ (expectOk(await call('POST', '/v1/tx/sign-and-send', { intent: i, ...(approvalTokenId ? { approvalTokenId } : {}) }), 'sign-and-send'))
  show('txHash', sent.txHash)
  show('broadcast', sent.broadcast ? 'yes' : `no: ${sent.broadcastError}`)
  const r = await receipt(sent.txHash)
  show('receipt', `${r.status} in block ${r.blockNumber}, gas ${r.gasUsed}`)
  return sent.txHash
}

async function main() {
  if (!existsSync(devFile)) {
    console.error(`The demo runs against the development stack. Start it first (another terminal): npm start\n(no ${devFile})`)
    process.exit(2)
  }
  // What npm start wrote (scripts/start.mjs).
  const dev = /** @type {{ wallet: string, contracts: import('./uniswap-fixture.mjs').UniswapFixture | null }} */ (JSON.parse(readFileSync(devFile, 'utf8')))
  const token = readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim()
  const wallet = dev.wallet
  const c = dev.contracts
  const tusd = c && { kind: 'erc20', address: c.tokenB, symbol: 'TUSD', decimals: 6 }
  const tka = c && { kind: 'erc20', address: c.tokenA, symbol: 'TKA', decimals: 18 }
  /** @type {string[]} */
  const hashes = []

  step(1, 'Health and balances')
  show('health', expectOk(await call('GET', '/v1/health'), 'health'))
  /** @param {string} token */
  const balance = async (token) => /** @type {Balance} */ (expectOk(await call('GET', `/v1/balance/${token}/${wallet}`), 'balance')).balance
  show('ETH', `${(Number(await balance(NATIVE)) / 1e18).toFixed(4)} ETH (wallet ${wallet})`)
  if (tusd) show('TUSD', `${Number(await balance(tusd.address)) / 1e6} TUSD`)

  step(2, 'A native transfer needs an operator: approve-request blocks until someone decides')
  const native = intent(wallet, { type: 'transfer_native', to: FRIEND, amount: '50000000000000000' })
  const waiting = call('POST', '/v1/tx/approve-request', native)
  // The request reaches the operator once the gateway has simulated it and
  // recorded it, which a slow chain can stretch: keep looking for as long as
  // approve-request itself is still waiting (a minute at most).
  let answered = false
  waiting.then(() => (answered = true), () => (answered = true))
  /** @type {PendingApproval | undefined} */
  let pending
  for (const giveUp = Date.now() + 60_000; !pending && !answered && Date.now() < giveUp; ) {
    pending = /** @type {PendingList} */ (expectOk(await call('GET', '/v1/approvals/pending'), 'pending')).pending.find((p) => p.summary.intentId === native.id)
    if (!pending) await new Promise((r) => setTimeout(r, 100))
  }
  if (pending) {
    show('pending', pending.summary.action)
    show('risk', `${pending.summary.riskScore}/100; ${pending.summary.warnings.join('; ') || 'no warnings'}`)
    if (manual) {
      console.log(`   Approve it on the dashboard: ${base}/approval-ui (operator token: ${token})`)
    } else {
      show('decision', 'approving with the operator token (run with --manual to click it yourself)')
      expectOk(await call('POST', `/v1/approvals/${pending.requestId}/decide`, { approved: true }, { authorization: `Bearer ${token}` }), 'decide')
    }
  } else if (!answered) {
    throw new Error('the request did not show up in the pending list within a minute, and approve-request is still waiting')
  }
  // Not seen pending but answered: decided on the dashboard between two looks, or refused (shown below).
  const answer = await waiting
  if (answer.status !== 200) throw new Error(`not approved: ${JSON.stringify(answer.body)}${rateLimitHint(answer.body)}`)
  const approved = /** @type {ApprovalResult} */ (answer.body)
  show('token', `${approved.approvalTokenId} (single use, 300 s, bound to ${approved.txRequestHash.slice(0, 18)}…)`)
  hashes.push(await sendAndShow(native, approved.approvalTokenId))

  if (c && tusd && tka) {
    step(3, 'An ERC-20 transfer: policy allows it without approval; preflight first')
    const transfer = intent(wallet, { type: 'transfer', asset: tusd, to: FRIEND, amount: '2500000' })
    const pf = /** @type {PreflightResult} */ (expectOk(await call('POST', '/v1/tx/preflight', transfer), 'preflight'))
    show('simulation', `${pf.simulationSuccess ? 'succeeds' : 'reverts'}, gas ${pf.gasEstimate}, risk ${pf.riskScore}`)
    show('balance diff', pf.balanceDiffs)
    hashes.push(await sendAndShow(transfer))

    step(4, 'A swap on the local Uniswap v3 pool: approve the router, quote by simulation, swap with a 1% floor')
    hashes.push(await sendAndShow(intent(wallet, { type: 'approve', asset: tusd, spender: c.swapRouter02, amount: '100000000' })))
    const probe = intent(wallet, { type: 'swap_exact_in', router: c.swapRouter02, assetIn: tusd, assetOut: tka, amountIn: '10000000', minAmountOut: '1' }, 100)
    const quote = /** @type {PreflightResult} */ (expectOk(await call('POST', '/v1/tx/preflight', probe), 'preflight'))
    const out = BigInt(quote.balanceDiffs.find((d) => d.token.toLowerCase() === tka.address.toLowerCase())?.change ?? '0')
    show('simulated', `10 TUSD -> ${(Number(out) / 1e18).toFixed(6)} TKA`)
    const swap = { ...probe, id: randomUUID(), action: { ...probe.action, minAmountOut: ((out * 99n) / 100n).toString() } }
    const description = /** @type {BuildResult} */ (expectOk(await call('POST', '/v1/tx/build', swap), 'build')).description
    show('building', description)
    hashes.push(await sendAndShow(swap))
    show('TKA now', `${Number(await balance(tka.address)) / 1e18} TKA`)
  } else {
    console.log('\n   (no Uniswap contracts on the dev chain: ERC-20 and swap steps skipped)')
  }

  step(5, 'Receipts')
  for (const h of hashes) {
    const r = await receipt(h)
    show(h.slice(0, 12) + '…', `${r.status}, block ${r.blockNumber}, gas ${r.gasUsed}, to ${r.to}`)
  }

  step(6, 'The audit trail (newest first), hash-chained in audit.db')
  for (const e of /** @type {HistoryResult} */ (expectOk(await call('GET', '/v1/approvals/history?limit=25'), 'history')).events) {
    const { intentId: _i, ...data } = e.data
    console.log(`   ${new Date(e.timestamp).toISOString().slice(11, 23)}  ${e.event.padEnd(24)} ${JSON.stringify(data).slice(0, 100)}`)
  }
  console.log(`\nDone. Verify the audit chain: npx countersign-audit verify --data-dir ${dataDir}`)
}

main().catch((err) => {
  console.error(`\ndemo failed: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
