// The zero-configuration development stack: a local anvil chain, a throwaway
// dev key (generated once, marked dev, funded on that chain only) and the
// Uniswap v3 contracts for the demo. Used only when no SERVICE_RPC_URL_* is
// configured; a dev key can never sign for anything but this local chain.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import path from 'node:path'
import { generatePrivateKey } from 'viem/accounts'

const require = createRequire(import.meta.url)
export const DEV_CHAIN_ID = 8453

/**
 * True when no chain is configured (no SERVICE_RPC_URL_<chain id>, no
 * BASE_RPC_URL): npm start then brings up the development stack. A blank
 * value is unset, as the services read it (found by review: a whitespace-only
 * SERVICE_RPC_URL_8453 counted as a chain here while the services ignored it,
 * and the stack ran with no chain); one naming a chain countersign does not
 * support, or any other SERVICE_RPC_URL_ name, counts as configured: the
 * services then refuse it by name (readRpcUrls).
 * @param {Record<string, string | undefined>} env
 * @returns {boolean}
 */
export function isDevMode(env) {
  return !Object.keys(env).some((k) => k.startsWith('SERVICE_RPC_URL_') && env[k]?.trim()) && !env.BASE_RPC_URL?.trim()
}

/**
 * Why the development stack must not start with this environment, or null.
 * The dev chain carries Base's chain id (8453), so whatever a key signs for
 * it is valid on Base too: only the throwaway dev key may sign there. The
 * launcher replaces the keystore settings with the dev keystore, but a
 * PKCS#11 token (SERVICE_PKCS11_*) would still be opened by the signer and
 * its real keys would sign for the dev chain (found by review). A blank value
 * is unset, as everywhere in the configuration.
 * @param {Record<string, string | undefined>} env
 * @returns {string | null}
 */
export function devModeRefusal(env) {
  const set = Object.keys(env)
    .filter((k) => k.startsWith('SERVICE_PKCS11_') && env[k]?.trim())
    .sort()
  if (set.length === 0) return null
  return (
    `${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set, but no SERVICE_RPC_URL_* is: the development stack signs only with its throwaway key, ` +
    `for a local chain that uses Base's chain id ${DEV_CHAIN_ID}, where a token key's signatures would be valid on Base too. ` +
    `Set SERVICE_RPC_URL_<chain id> to use the token, or unset ${set.length === 1 ? 'it' : 'them'} (in the environment or .env) to run the development stack`
  )
}

/**
 * @param {number} port
 * @returns {Promise<boolean>}
 */
async function portFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })
}

/**
 * @param {{ port: number, log: (msg: string) => void }} opts
 * @returns {Promise<{ rpcUrl: string, child: import('node:child_process').ChildProcess }>}
 */
export async function startDevChain({ port, log }) {
  if (!(await portFree(port))) throw new Error(`port ${port} is taken; set SERVICE_DEV_CHAIN_PORT to a free port for the dev chain`)
  const bin = path.join(path.dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil')
  // anvil needs nothing of the launcher's environment, which holds .env's secrets.
  const child = spawn(bin, ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(DEV_CHAIN_ID), '--silent'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
  })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const rpcUrl = `http://127.0.0.1:${port}`
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`anvil exited: ${stderr}`)
      try {
        const r = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' })
        if (r.ok) break
      } catch {}
      if (i > 400) throw new Error('anvil did not start within 10 s')
      await new Promise((r) => setTimeout(r, 25))
    }
  } catch (err) {
    // Not left running: nobody else knows of it yet, and it would hold the port for the next start.
    child.kill('SIGKILL')
    throw err
  }
  log(`dev chain: anvil on ${rpcUrl} (chain id ${DEV_CHAIN_ID}), pid ${child.pid}`)
  return { rpcUrl, child }
}

/**
 * One JSON-RPC call to the dev chain; its result, unread.
 * @param {string} rpcUrl
 * @param {string} method
 * @param {unknown[]} params
 * @returns {Promise<unknown>}
 */
async function rpc(rpcUrl, method, params) {
  const r = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })
  // A JSON-RPC answer (anvil's): a result or an error.
  const body = /** @type {{ result?: unknown, error?: { message?: unknown } }} */ (await r.json())
  if (body.error) throw new Error(`${method}: ${body.error.message}`)
  return body.result
}

/**
 * DATA_DIR/dev-keystore holds one key marked dev, encrypted with a random
 * passphrase kept beside it (0600). It is a separate directory from the real
 * keystore, and the signer is pointed at it only in dev mode.
 * @param {{ root: string, dataDir: string, log: (msg: string) => void }} opts
 * @returns {Promise<{ address: string, keystoreDir: string, passFile: string }>}
 */
export async function ensureDevKey({ root, dataDir, log }) {
  const keystoreDir = path.join(dataDir, 'dev-keystore')
  const passFile = path.join(dataDir, 'dev-passphrase')
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  if (!existsSync(passFile)) writeFileSync(passFile, randomBytes(24).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' })
  chmodSync(passFile, 0o600)
  /** @type {typeof import('../services/signer/dist/keystore/keystore.js')} */
  const { Keystore } = await import(path.join(root, 'services/signer/dist/keystore/keystore.js'))
  const keystore = new Keystore(keystoreDir)
  let [key] = keystore.list()
  const passphrase = () => readFileSync(passFile, 'utf8').replace(/\r?\n$/, '')
  if (!key) {
    key = await keystore.save(generatePrivateKey(), passphrase(), { label: 'dev (throwaway, local chain only)', dev: true })
    log(`dev key generated: ${key.address} (in ${keystoreDir})`)
  }
  if (!key.dev) throw new Error(`${keystoreDir} holds a key that is not marked dev; refusing to use it for the dev chain`)
  // A dev keystore from before format version 2 (which the signer refuses): its key is marked dev, checked just above, so it is resealed as one.
  if (key.version === 1) {
    const [resealed] = await keystore.reseal(passphrase())
    if (!resealed) throw new Error(`${keystoreDir}: resealing its dev key left no key`)
    key = resealed
  }
  return { address: key.address, keystoreDir, passFile }
}

/**
 * @param {string} rpcUrl
 * @param {string} address
 * @param {bigint} [eth] whole ether
 * @returns {Promise<void>}
 */
export async function fundOnDevChain(rpcUrl, address, eth = 100n) {
  await rpc(rpcUrl, 'anvil_setBalance', [address, `0x${(eth * 10n ** 18n).toString(16)}`])
}
