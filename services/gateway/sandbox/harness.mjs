// Runs inside the sandbox (bubblewrap + Node's permission model). It is ours,
// not the skill's: it gives the skill its only way out — submitIntent over
// the Unix socket the gateway bound at /run/countersign.sock — then imports
// the skill's entry, calls run(input, api) and writes the result, one JSON
// line, on descriptor 4 (runSkill.ts RESULT_FD), never on stdout: whatever
// the skill prints there cannot be taken for its result (found by review).
import net from 'node:net'

const SOCKET = '/run/countersign.sock'
const RESULT_FD = 4
let nextId = 1

function call(method, params) {
  return new Promise((resolve, reject) => {
    const s = net.connect(SOCKET)
    let buf = ''
    s.on('data', (d) => {
      buf += d
      const nl = buf.indexOf('\n')
      if (nl === -1) return
      s.end()
      const msg = JSON.parse(buf.slice(0, nl))
      if (msg.error) reject(Object.assign(new Error(msg.error.message), { code: msg.error.code, data: msg.error.data }))
      else resolve(msg.result)
    })
    s.on('error', reject)
    s.write(JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }) + '\n')
  })
}

const api = Object.freeze({
  /** Submits a TxIntent; it goes through policy and, when policy says so, an operator's approval. */
  submitIntent: (intent) => call('submitIntent', { intent }),
})
globalThis.countersign = api

const [entry, inputJson] = process.argv.slice(2)
const input = JSON.parse(inputJson ?? 'null')
const mod = await import(entry)
const run = mod.run ?? mod.default
if (typeof run !== 'function') {
  process.stderr.write(`skill entry ${entry} exports no run(input, api) function\n`)
  process.exit(2)
}
const line = JSON.stringify({ result: (await run(input, api)) ?? null }) + '\n'
// Opened only now, so that while the skill runs no handle of the process leads to it.
new net.Socket({ fd: RESULT_FD, readable: false }).end(line)
