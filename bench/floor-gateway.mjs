// The gateway of the guarantees-only floor (bench/pipeline.mjs, sequential
// part): fastify with two routes that make the bare pipeline's chain calls
// (the same viem calls) and add only what the goal's guarantees cost: the
// simulation before approval, a hop to a signer process (bench/floor-signer.mjs)
// for the token and for the signature, and with FLOOR_DURABLE_BROADCAST_AUDIT=1
// the broadcast's audit row durable before the reply, as countersign keeps it.
// No validation, policy, risk, wallet queue, nonce bookkeeping or Server-Timing.
import net from 'node:net'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { createPublicClient, defineChain, http, keccak256, stringToHex } from 'viem'

const { PORT, FLOOR_SOCKET, FLOOR_RPC, FLOOR_AUDIT_DB, FLOOR_DURABLE_BROADCAST_AUDIT: durableBroadcast } = process.env
const chainId = Number(process.env.FLOOR_CHAIN_ID)
if (!FLOOR_SOCKET || !FLOOR_RPC || !FLOOR_AUDIT_DB || !chainId) throw new Error('FLOOR_SOCKET, FLOOR_RPC, FLOOR_AUDIT_DB and FLOOR_CHAIN_ID are required')
const [socketPath, rpcUrl, auditPath] = [FLOOR_SOCKET, FLOOR_RPC, FLOOR_AUDIT_DB]
// Defined as the bare pipeline's client is, so both make the same calls.
const chain = defineChain({ id: chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } })
const client = createPublicClient({ chain, transport: http(rpcUrl), cacheTime: 0 })

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
  const res = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(calls.map(([method, params], id) => ({ jsonrpc: '2.0', id, method, params }))) })
  const answers = /** @type {{ id: number, result?: unknown, error?: { message: string } }[]} */ (await res.json())
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
app.post('/approve', async (/** @type {import('fastify').FastifyRequest<{ Body: Transfer }>} */ req) => {
  const t = req.body
  const t0 = performance.now()
  /** @type {import('viem').RpcTransactionRequest} */
  const call = { from: t.from, to: t.to, data: '0x', value: `0x${BigInt(t.value).toString(16)}` }
  const [sim] = await client.request({ method: 'eth_simulateV1', params: [{ blockStateCalls: [{ calls: [call] }], traceTransfers: true, validation: false }, 'latest'] })
  if (sim?.calls[0]?.status !== '0x1') throw new Error('simulation failed')
  const t1 = performance.now()
  const minted = await signer.call('mint', { txRequestHash: txRequestHashOf(t) })
  return { ...minted, phases: { simulate: t1 - t0, mint: performance.now() - t1 } }
})
app.post('/send', async (/** @type {import('fastify').FastifyRequest<{ Body: Transfer & { tokenId: string, intentId: string } }>} */ req) => {
  const t = req.body
  const value = BigInt(t.value)
  const t0 = performance.now()
  // One JSON-RPC batch (one HTTP request) for the four reads, as countersign's gateway sends them.
  const [block, tipHex, nonceHex, gasHex] = /** @type {[{ baseFeePerGas?: import('viem').Hex }, import('viem').Hex, import('viem').Hex, import('viem').Hex]} */ (
    await rpcBatch([
      ['eth_getBlockByNumber', ['latest', false]],
      ['eth_maxPriorityFeePerGas', []],
      ['eth_getTransactionCount', [t.from, 'pending']],
      ['eth_estimateGas', [{ from: t.from, to: t.to, data: '0x', value: `0x${value.toString(16)}` }]],
    ])
  )
  const [tip, nonce, gas] = [BigInt(tipHex), Number(nonceHex), BigInt(gasHex)]
  if (!block.baseFeePerGas) throw new Error('the latest block has no base fee')
  const tx = { chainId, nonce, to: t.to, value: t.value, gas: gas.toString(), maxFeePerGas: (BigInt(block.baseFeePerGas) * 2n + tip).toString(), maxPriorityFeePerGas: tip.toString() }
  const t1 = performance.now()
  const { signedTx } = await signer.call('sign', { tokenId: t.tokenId, intentId: t.intentId, tx })
  const t2 = performance.now()
  const txHash = await client.request({ method: 'eth_sendRawTransaction', params: [signedTx] })
  const t3 = performance.now()
  audit({ event: 'tx_broadcast', intentId: t.intentId, txHash })
  const t4 = performance.now()
  return { txHash, phases: { chain: t1 - t0, signer: t2 - t1, broadcast: t3 - t2, audit: t4 - t3 } }
})
await app.listen({ host: '127.0.0.1', port: Number(PORT) })
process.on('SIGTERM', () => app.close().then(() => process.exit(0)))
