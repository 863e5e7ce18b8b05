// The gateway of the guarantees-only floor (bench/pipeline.mjs, sequential
// part): fastify with two routes that make the bare pipeline's chain calls and
// add only what the goal's guarantees cost: the simulation before approval, a
// hop to a signer process (bench/floor-signer.mjs) for the token and for the
// signature, and with FLOOR_DURABLE_BROADCAST_AUDIT=1 the broadcast's audit row
// durable before the reply, as countersign keeps it. The four reads before
// signing go as one JSON-RPC batch, or with the simulation (FLOOR_PREFETCH
// below); every call to the node goes over node:http with a keep-alive agent,
// the cheapest client here (fetch cost 0.6–0.8 ms more a request). Nothing of
// countersign's own machinery (its audit log, its RPC layer, viem's transport)
// is used, so the floor measures the guarantees and not that code. No
// validation, policy, risk, wallet queue, approver process or Server-Timing;
// the nonce is only kept per wallet.
import http from 'node:http'
import net from 'node:net'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { keccak256, stringToHex } from 'viem'

const { PORT, FLOOR_SOCKET, FLOOR_RPC, FLOOR_AUDIT_DB, FLOOR_DURABLE_BROADCAST_AUDIT: durableBroadcast, FLOOR_PREFETCH: prefetch } = process.env
const chainId = Number(process.env.FLOOR_CHAIN_ID)
if (!FLOOR_SOCKET || !FLOOR_RPC || !FLOOR_AUDIT_DB || !chainId) throw new Error('FLOOR_SOCKET, FLOOR_RPC, FLOOR_AUDIT_DB and FLOOR_CHAIN_ID are required')
const [socketPath, rpcUrl, auditPath] = [FLOOR_SOCKET, FLOOR_RPC, FLOOR_AUDIT_DB]
const node = new URL(rpcUrl)
const agent = new http.Agent({ keepAlive: true })

/**
 * One JSON-RPC request (a call or a batch) to the node; its parsed answer.
 * @param {unknown} payload
 * @returns {Promise<any>}
 */
function postRpc(payload) {
  const body = JSON.stringify(payload)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: node.hostname, port: node.port, path: node.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => {
        try {
          resolve(JSON.parse(text))
        } catch (err) {
          reject(err)
        }
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * @param {string} method
 * @param {unknown[]} params
 * @returns {Promise<any>}
 */
async function rpc(method, params) {
  const answer = await postRpc({ jsonrpc: '2.0', id: 1, method, params })
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`)
  return answer.result
}

const auditDb = new Database(auditPath)
auditDb.pragma('journal_mode = WAL')
auditDb.pragma(`synchronous = ${durableBroadcast === '1' ? 'FULL' : 'OFF'}`)
auditDb.exec('CREATE TABLE IF NOT EXISTS audit (seq INTEGER PRIMARY KEY, hash TEXT NOT NULL, event TEXT NOT NULL)')
const insertAudit = auditDb.prepare('INSERT INTO audit (hash, event) VALUES (?, ?)')
let head = keccak256('0x')
/** @param {object} event */
function audit(event) {
  const text = JSON.stringify(event)
  head = keccak256(stringToHex(head + text))
  insertAudit.run(head, text)
}

/** One connection to the floor signer, newline-delimited JSON, calls matched by id. */
function signerChannel() {
  const conn = net.connect(socketPath)
  conn.setEncoding('utf8')
  /** @type {Map<number, { resolve: (v: any) => void, reject: (e: Error) => void }>} */
  const waiting = new Map()
  let next = 1
  let buffered = ''
  conn.on('data', (chunk) => {
    buffered += chunk
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const { id, result, error } = JSON.parse(buffered.slice(0, nl))
      buffered = buffered.slice(nl + 1)
      const call = waiting.get(id)
      waiting.delete(id)
      if (error) call?.reject(new Error(error))
      else call?.resolve(result)
    }
  })
  return {
    /** @param {string} method @param {object} params @returns {Promise<any>} */
    call: (method, params) =>
      new Promise((resolve, reject) => {
        const id = next++
        waiting.set(id, { resolve, reject })
        conn.write(`${JSON.stringify({ id, method, params })}\n`)
      }),
  }
}
const signer = signerChannel()

/**
 * Calls as one JSON-RPC batch; their results in order.
 * @param {[string, unknown[]][]} calls
 * @returns {Promise<unknown[]>}
 */
async function rpcBatch(calls) {
  const answers = /** @type {{ id: number, result?: unknown, error?: { message: string } }[]} */ (await postRpc(calls.map(([method, params], id) => ({ jsonrpc: '2.0', id, method, params }))))
  return calls.map((_, id) => {
    const a = answers.find((x) => x.id === id)
    if (!a || a.error) throw new Error(`${calls[id]?.[0]}: ${a?.error?.message ?? 'no answer'}`)
    return a.result
  })
}

/** @typedef {{ from: import('viem').Address, to: import('viem').Address, value: string }} Transfer value: decimal wei */
const txRequestHashOf = (/** @type {Transfer} */ t) => keccak256(stringToHex(JSON.stringify({ chainId, from: t.from, to: t.to, value: t.value })))

const app = Fastify({ logger: false })
app.get('/ready', async () => ({ ok: true }))
/** @typedef {[{ baseFeePerGas?: import('viem').Hex }, import('viem').Hex, import('viem').Hex, import('viem').Hex]} Reads block, tip, pending nonce, gas */
/** @param {Transfer} t @returns {[string, unknown[]][]} the four reads signing needs */
const readsFor = (t) => [
  ['eth_getBlockByNumber', ['latest', false]],
  ['eth_maxPriorityFeePerGas', []],
  ['eth_getTransactionCount', [t.from, 'pending']],
  ['eth_estimateGas', [{ from: t.from, to: t.to, data: '0x', value: `0x${BigInt(t.value).toString(16)}` }]],
]
// FLOOR_PREFETCH=1: the reads signing needs go out with the simulation, in
// the same batch, and /send takes them if they are under a second old (the
// cheapest way to meet the letter; countersign reuses its fee read the
// same way, but reads the nonce and estimates the gas again at signing, its
// last check that the transaction would not fail). Without it /send reads
// them, as countersign does. The nonce is kept per wallet so a read taken
// before another send never repeats one.
/** @type {Map<string, { at: number, reads: Reads }>} */
const readAtApproval = new Map()
/** @type {Map<string, number>} */
const lastNonce = new Map()
const REUSE_MS = 1000

app.post('/approve', async (/** @type {import('fastify').FastifyRequest<{ Body: Transfer }>} */ req) => {
  const t = req.body
  const t0 = performance.now()
  const call = { from: t.from, to: t.to, data: '0x', value: `0x${BigInt(t.value).toString(16)}` }
  const [simulated, ...reads] = await rpcBatch([['eth_simulateV1', [{ blockStateCalls: [{ calls: [call] }], traceTransfers: true, validation: false }, 'latest']], ...(prefetch === '1' ? readsFor(t) : [])])
  const [sim] = /** @type {{ calls: { status: string }[] }[]} */ (simulated)
  if (sim?.calls[0]?.status !== '0x1') throw new Error('simulation failed')
  const t1 = performance.now()
  const minted = await signer.call('mint', { txRequestHash: txRequestHashOf(t) })
  if (prefetch === '1') readAtApproval.set(minted.tokenId, { at: Date.now(), reads: /** @type {Reads} */ (reads) })
  return { ...minted, phases: { simulate: t1 - t0, mint: performance.now() - t1 } }
})
app.post('/send', async (/** @type {import('fastify').FastifyRequest<{ Body: Transfer & { tokenId: string, intentId: string } }>} */ req) => {
  const t = req.body
  const t0 = performance.now()
  const kept = readAtApproval.get(t.tokenId)
  readAtApproval.delete(t.tokenId)
  const [block, tipHex, nonceHex, gasHex] = kept && Date.now() - kept.at < REUSE_MS ? kept.reads : /** @type {Reads} */ (await rpcBatch(readsFor(t)))
  const [tip, gas] = [BigInt(tipHex), BigInt(gasHex)]
  const nonce = Math.max(Number(nonceHex), (lastNonce.get(t.from) ?? -1) + 1)
  if (!block.baseFeePerGas) throw new Error('the latest block has no base fee')
  const tx = { chainId, nonce, to: t.to, value: t.value, gas: gas.toString(), maxFeePerGas: (BigInt(block.baseFeePerGas) * 2n + tip).toString(), maxPriorityFeePerGas: tip.toString() }
  const t1 = performance.now()
  const { signedTx } = await signer.call('sign', { tokenId: t.tokenId, intentId: t.intentId, tx })
  lastNonce.set(t.from, nonce)
  const t2 = performance.now()
  const txHash = /** @type {string} */ (await rpc('eth_sendRawTransaction', [signedTx]))
  const t3 = performance.now()
  audit({ event: 'tx_broadcast', intentId: t.intentId, txHash })
  const t4 = performance.now()
  return { txHash, phases: { chain: t1 - t0, signer: t2 - t1, broadcast: t3 - t2, audit: t4 - t3 } }
})
await app.listen({ host: '127.0.0.1', port: Number(PORT) })
process.on('SIGTERM', () => app.close().then(() => process.exit(0)))
