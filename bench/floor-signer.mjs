// The signer of the guarantees-only floor (bench/pipeline.mjs, sequential
// part): a process of its own behind a Unix socket that mints approval tokens
// and signs, with none of countersign's checks (no policy, no keystore, no
// intent rebuilt). What it keeps is what the goal's guarantees cost:
//   - a token consumed and its signature recorded, durable before the reply
//     (one SQLite transaction, synchronous=FULL: one fsync), with a
//     hash-chained audit row in that same transaction (countersign's signer
//     writes a second file, audit.db, in a parallel fsync: this is cheaper);
//   - FLOOR_DURABLE_MINT=1: the token and its audit row durable before the
//     mint answers, as countersign keeps them (one fsync); 0: no fsync.
// Newline-delimited JSON: {id, method: "mint" | "sign", params} → {id, result} or {id, error}.
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import net from 'node:net'
import Database from 'better-sqlite3'
import { keccak256, stringToHex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

const { FLOOR_SOCKET: socketPath, FLOOR_DB: dbPath, FLOOR_KEY: key, FLOOR_DURABLE_MINT: durableMint } = process.env
if (!socketPath || !dbPath || !key) throw new Error('FLOOR_SOCKET, FLOOR_DB and FLOOR_KEY are required')
const account = privateKeyToAccount(/** @type {import('viem').Hex} */ (key))

const db = new Database(dbPath)
db.pragma('journal_mode = WAL')
db.exec(`
  CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, tx_request_hash TEXT NOT NULL, expires_at INTEGER NOT NULL, consumed INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE IF NOT EXISTS signatures (intent_id TEXT PRIMARY KEY, token_id TEXT NOT NULL, signed_tx TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS audit (seq INTEGER PRIMARY KEY, hash TEXT NOT NULL, event TEXT NOT NULL);
`)
const insertToken = db.prepare('INSERT INTO tokens (id, tx_request_hash, expires_at) VALUES (?, ?, ?)')
const readToken = db.prepare('SELECT tx_request_hash AS txRequestHash, expires_at AS expiresAt, consumed FROM tokens WHERE id = ?')
const consumeToken = db.prepare('UPDATE tokens SET consumed = 1 WHERE id = ? AND consumed = 0')
const insertSignature = db.prepare('INSERT INTO signatures (intent_id, token_id, signed_tx) VALUES (?, ?, ?)')
const insertAudit = db.prepare('INSERT INTO audit (hash, event) VALUES (?, ?)')
const lastHash = db.prepare('SELECT hash FROM audit ORDER BY seq DESC LIMIT 1').pluck()
let head = /** @type {string | undefined} */ (lastHash.get()) ?? keccak256('0x')

/** @param {object} event */
function audit(event) {
  const text = JSON.stringify(event)
  head = keccak256(stringToHex(head + text))
  insertAudit.run(head, text)
}

/** @param {boolean} durable */
const synchronous = (durable) => db.pragma(`synchronous = ${durable ? 'FULL' : 'OFF'}`)

const mint = db.transaction((/** @type {string} */ txRequestHash) => {
  const id = randomUUID()
  const expiresAt = Date.now() + 300_000
  insertToken.run(id, txRequestHash, expiresAt)
  audit({ event: 'approval_granted', tokenId: id, txRequestHash })
  return { tokenId: id, expiresAt }
})

const record = db.transaction((/** @type {string} */ tokenId, /** @type {string} */ intentId, /** @type {string} */ signedTx) => {
  if (consumeToken.run(tokenId).changes !== 1) throw new Error('token already consumed')
  insertSignature.run(intentId, tokenId, signedTx)
  audit({ event: 'signature_created', intentId, tokenId, txHash: keccak256(/** @type {import('viem').Hex} */ (signedTx)) })
})

/**
 * @param {{ to: import('viem').Address, value: string, nonce: number, gas: string, maxFeePerGas: string, maxPriorityFeePerGas: string, chainId: number }} tx
 */
const txRequestHashOf = (tx) => keccak256(stringToHex(JSON.stringify({ chainId: tx.chainId, from: account.address, to: tx.to, value: tx.value })))

/** @type {Record<string, (params: any) => Promise<unknown>>} */
const methods = {
  async mint({ txRequestHash }) {
    synchronous(durableMint === '1')
    return mint(txRequestHash)
  },
  async sign({ tokenId, intentId, tx }) {
    const token = /** @type {{ txRequestHash: string, expiresAt: number, consumed: number } | undefined} */ (readToken.get(tokenId))
    if (!token || token.consumed || token.expiresAt < Date.now() || token.txRequestHash !== txRequestHashOf(tx)) throw new Error('invalid approval token')
    const request = { type: /** @type {const} */ ('eip1559'), chainId: tx.chainId, nonce: tx.nonce, to: tx.to, value: BigInt(tx.value), gas: BigInt(tx.gas), maxFeePerGas: BigInt(tx.maxFeePerGas), maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas) }
    const signedTx = await account.signTransaction(request)
    synchronous(true)
    record(tokenId, intentId, signedTx)
    return { signedTx }
  },
}

rmSync(socketPath, { force: true })
const server = net.createServer((conn) => {
  let buffered = ''
  conn.setEncoding('utf8')
  conn.on('data', (chunk) => {
    buffered += chunk
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      const { id, method, params } = JSON.parse(line)
      const handler = methods[method]
      Promise.resolve()
        .then(() => (handler ? handler(params) : Promise.reject(new Error(`no method ${method}`))))
        .then(
          (result) => conn.write(`${JSON.stringify({ id, result })}\n`),
          (err) => conn.write(`${JSON.stringify({ id, error: String(err?.message ?? err) })}\n`),
        )
    }
  })
})
server.listen(socketPath, () => process.stderr.write('floor signer ready\n'))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
