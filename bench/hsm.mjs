// The signer with a key on a PKCS#11 token (SoftHSM2 in a temp dir) against
// raw CKM_ECDSA signing on the same token, both at concurrency 8, in one run.
// BENCH_SIGNER_CPU_PROF=<dir> runs the signer under --cpu-prof.
import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildTransaction, createRpcClient, defaultRouterTable, SIGNER_SOCKET } from '@countersign/shared'
import { fmt, nth, ratio, root, tempDir } from './lib.mjs'
import { transferIntent, throughput } from './signing.mjs'
import { isAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { devKeys, startStack } from './stack.mjs'

/** @typedef {import('../services/signer/dist/signing/signerCore.js').SignerDurability} SignerDurability what the signer's health reports of its work */

const MODULE = '/usr/lib/softhsm/libsofthsm2.so'
const LABEL = 'countersign-bench'
const CONCURRENCY = 8

/**
 * @typedef {object} SoftHsmToken a SoftHSM2 token in a temp dir
 * @property {string} dir
 * @property {string} pin
 * @property {Record<string, string>} env the signer's settings for it (and SOFTHSM2_CONF)
 */

/** @returns {SoftHsmToken} */
function softHsmToken() {
  const dir = tempDir('cs-b-hsm-')
  const tokenDir = path.join(dir, 'tokens')
  mkdirSync(tokenDir, { mode: 0o700 })
  const conf = path.join(dir, 'softhsm2.conf')
  writeFileSync(conf, `directories.tokendir = ${tokenDir}\nobjectstore.backend = file\nlog.level = ERROR\n`)
  const pin = 'bench-pin-1234'
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', LABEL, '--so-pin', 'bench-so-1234', '--pin', pin], { env: { ...process.env, SOFTHSM2_CONF: conf }, stdio: 'pipe' })
  const pinFile = path.join(dir, 'pin')
  writeFileSync(pinFile, pin, { mode: 0o600 })
  return { dir, pin, env: { SOFTHSM2_CONF: conf, SERVICE_PKCS11_MODULE: MODULE, SERVICE_PKCS11_TOKEN_LABEL: LABEL, SERVICE_PKCS11_PIN_FILE: pinFile, SERVICE_PKCS11_SESSIONS: String(CONCURRENCY) } }
}

/**
 * countersign-keys hsm-generate: a key on the token, labelled bench.
 * @param {string} dataDir
 * @param {Record<string, string>} env
 * @returns {Promise<import('viem').Address>} its address
 */
function hsmGenerate(dataDir, env) {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [path.join(root, 'services/signer/dist/cli/keys.js'), 'hsm-generate', '--label', 'bench', '--data-dir', dataDir], { env: { ...process.env, ...env } }, (err, out, errOut) => {
      const address = out.trim()
      if (err) reject(new Error(errOut))
      else if (!isAddress(address, { strict: false })) reject(new Error(`hsm-generate printed ${JSON.stringify(out)}, not an address`))
      else resolve(address)
    }),
  )
}

/**
 * CKM_ECDSA over random digests straight through pkcs11js, one session per worker: the ceiling.
 * @param {SoftHsmToken} token
 * @param {number} ms
 */
async function rawPkcs11Rate(token, ms) {
  process.env.SOFTHSM2_CONF = token.env.SOFTHSM2_CONF
  const { default: pkcs11js } = await import('pkcs11js')
  const p = new pkcs11js.PKCS11()
  p.load(MODULE)
  p.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK })
  try {
    const slot = p.C_GetSlotList(true).find((s) => p.C_GetTokenInfo(s).label.trimEnd() === LABEL)
    if (!slot) throw new Error(`no token labelled ${LABEL} in ${MODULE}`)
    const sessions = Array.from({ length: CONCURRENCY }, () => p.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION))
    const first = nth(sessions, 0)
    p.C_Login(first, pkcs11js.CKU_USER, token.pin)
    p.C_FindObjectsInit(first, [{ type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY }, { type: pkcs11js.CKA_LABEL, value: 'bench' }])
    const [key] = p.C_FindObjects(first, 1)
    p.C_FindObjectsFinal(first)
    if (!key) throw new Error(`no private key labelled bench on the token ${LABEL}`)
    const cpu = process.cpuUsage()
    let n = 0
    const rate = await throughput(
      async (w) => {
        p.C_SignInit(nth(sessions, w), { mechanism: pkcs11js.CKM_ECDSA }, key)
        await p.C_SignAsync(nth(sessions, w), randomBytes(32), Buffer.alloc(64))
        n++
      },
      { concurrency: CONCURRENCY, ms },
    )
    const used = process.cpuUsage(cpu)
    return { rate, cpuUs: (used.user + used.system) / Math.max(n, 1) }
  } finally {
    p.C_Finalize()
    p.close()
  }
}

/** @param {{ ms?: number }} [opts] ms: each measurement's length */
export async function benchHsm({ ms = 5000 } = {}) {
  const token = softHsmToken()
  const keyDir = tempDir('cs-b-hsmkeys-')
  const wallet = await hsmGenerate(keyDir, token.env)
  const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(' ')
  const { rate: raw, cpuUs: rawCpuUs } = await rawPkcs11Rate(token, ms)

  // One signer with both backends: a keystore key and the token key, signed with one after the other in the same run.
  // BENCH_SIGNER_CPU_PROF=<dir>: the signer runs under --cpu-prof, as in the sign bench.
  const prof = process.env.BENCH_SIGNER_CPU_PROF
  const nodeArgs = prof ? { signer: ['--cpu-prof', `--cpu-prof-dir=${path.resolve(prof)}`] } : {}
  const stack = await startStack({ keys: [devKeys[0]], policy: { maxTxPerHour: 1_000_000_000, requireApprovalAbove: { valueWei: '1000000000000000000000' } }, env: token.env, nodeArgs })
  const client = createRpcClient({ socketPath: path.join(stack.dataDir, 'run', SIGNER_SOCKET) })
  const routers = defaultRouterTable()
  /** @type {Map<string, number>} */
  const nonces = new Map()
  let failures = 0
  // The signer's CPU per signature, all its threads (the token's signing runs in the signer's libuv pool).
  const signRate = async (/** @type {import('viem').Address} */ address) => {
    /** @type {{ durability: SignerDurability }} */
    const healthBefore = await client.call('health', {})
    const before = healthBefore.durability
    const rate = await throughput(
      async () => {
        const nonce = nonces.get(address) ?? 0
        nonces.set(address, nonce + 1)
        const intent = transferIntent(address, nonce)
        const { txRequest } = buildTransaction(intent, routers)
        try {
          await client.call('sign', { intent, txRequest, nonce, gas: '21000', maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000' })
        } catch {
          failures++
        }
      },
      { concurrency: CONCURRENCY, ms },
    )
    /** @type {{ durability: SignerDurability }} */
    const healthAfter = await client.call('health', {})
    const after = healthAfter.durability
    const cpuUs = (after.cpuUs.user + after.cpuUs.system - before.cpuUs.user - before.cpuUs.system) / Math.max(after.signatures - before.signatures, 1)
    return { rate, cpuUs }
  }
  try {
    const { rate: rpc, cpuUs: hsmCpuUs } = await signRate(wallet)
    const { rate: keystoreRpc, cpuUs: keystoreCpuUs } = await signRate(privateKeyToAccount(devKeys[0]).address)
    console.log(`\nPKCS#11 key (SoftHSM2 token, ${CONCURRENCY} sessions): signer RPC vs raw CKM_ECDSA, concurrency ${CONCURRENCY}`)
    console.log(`  load average before / after         ${loadBefore} / ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`)
    console.log(`  raw pkcs11js C_Sign, ${CONCURRENCY} sessions     ${fmt(raw).padStart(7)} sig/s`)
    console.log(`  signer RPC, HSM key                ${fmt(rpc).padStart(7)} sig/s`)
    console.log(`  signer RPC, keystore key, same run ${fmt(keystoreRpc).padStart(7)} sig/s  (failures ${failures})`)
    console.log(`  ratio HSM RPC / raw                ${fmt(ratio(rpc, raw) * 100, 1)} %   (goal: >= 80 %)`)
    console.log(`  ratio HSM RPC / keystore RPC       ${fmt(ratio(rpc, keystoreRpc) * 100, 1)} %`)
    console.log(`  CPU per signature: raw C_Sign ${fmt(rawCpuUs)} µs (the bench process, token included); signer, all its threads: HSM key ${fmt(hsmCpuUs)} µs, keystore key ${fmt(keystoreCpuUs)} µs`)
    if (failures) throw new Error('HSM signing benchmark saw failures')
    return { raw, rpc }
  } finally {
    client.close()
    await stack.stop()
  }
}
