// Issue 18 end to end: a secp256k1 key generated on a SoftHSM2 token (in a
// temp dir, by the key CLI) signs through the real gateway, signer and anvil.
// The key never exists outside the token.
import { execFile } from 'node:child_process'
import { chmodSync, copyFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getAddress, parseEther, parseTransaction, recoverTransactionAddress, type Address, type Hex } from 'viem'
import { buildTransaction, createRpcClient, defaultRouterTable, SIGNER_SOCKET, type AccountInfo, type Action, type SignResult, type TxIntent } from '@countersign/shared'
import { initSoftHsmToken, SOFTHSM_MODULE, type SoftHsmToken } from '../services/signer/src/pkcs11/softhsm.testkit.js'
import { initialize, listTokenKeys, loadModule, loadPkcs11Lib, login, slotOfToken } from '../services/signer/src/pkcs11/token.js'
import { anvilAccounts, fundAccount, startAnvil, type Anvil } from './support/anvil.js'
import { clientsFor, deployTestToken, erc20Balance, erc20Write } from './support/contracts.js'
import { intentFor } from './support/intents.js'
import { tempDataDir, waitFor } from './support/processes.js'
import { entries, Stack } from './support/stack.js'

const owner = anvilAccounts[0]
const BOB = '0x000000000000000000000000000000000000b0b0' as Address
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n

let anvil: Anvil
let tusd: Address
let token: SoftHsmToken
let stack: Stack
let hsmWallet: Address

function keysCli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [entries.keys, ...args, '--data-dir', stack.dataDir], { env: { PATH: process.env.PATH ?? '', ...token.env } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr }),
    )
  })
}

const intent = (action: Action): TxIntent => intentFor(hsmWallet, action, { chainId: 8453, maxGasWei: parseEther('0.05').toString() })
const transferTusd = (amount: string): Action => ({ type: 'transfer', asset: { kind: 'erc20', address: tusd, symbol: 'TUSD', decimals: 6 }, to: BOB, amount })

async function receipt(hash: string) {
  return waitFor(
    async () => {
      const r = await stack.get(`/v1/tx/${hash}`)
      return r.status === 200 ? r.body : null
    },
    { timeoutMs: 15_000, what: `receipt of ${hash}` },
  )
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  tusd = await deployTestToken({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: owner.privateKey, name: 'Test USD', symbol: 'TUSD', decimals: 6, supply: 1_000_000_000_000n })
  token = initSoftHsmToken('countersign-hsm')
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 }, env: token.env })

  const generated = await keysCli(['hsm-generate', '--label', 'treasury'])
  expect(generated).toMatchObject({ code: 0, err: '' })
  hsmWallet = getAddress(generated.out.trim())
  // Fund the token's address: gas money and TUSD.
  await fundAccount(anvil.rpcUrl, hsmWallet, parseEther('10'))
  await erc20Write({ rpcUrl: anvil.rpcUrl, chainId: 8453, fromKey: owner.privateKey as Hex, token: tusd, functionName: 'transfer', args: [hsmWallet, 1_000_000_000n] })
  await stack.start()
}, 180_000)

afterAll(async () => {
  await stack?.stop()
  await anvil?.stop()
  if (token) rmSync(token.dir, { recursive: true, force: true })
})

describe('a key on a PKCS#11 token', () => {
  it('is listed by the key CLI and the signer accounts method with its backend, and a second key of the same label is refused', async () => {
    expect(await keysCli(['hsm-list'])).toEqual({ code: 0, out: `${hsmWallet}  treasury\n`, err: '' })
    expect(await keysCli(['list'])).toEqual({ code: 0, out: `${hsmWallet}  treasury  pkcs11\n`, err: '' })
    // The running signer says the same over its accounts method.
    const signer = createRpcClient({ socketPath: path.join(stack.dataDir, 'run', SIGNER_SOCKET) })
    try {
      expect(await signer.call<AccountInfo[]>('accounts', {})).toEqual([{ address: hsmWallet, label: 'treasury', dev: false, unlocked: true, backend: 'pkcs11' }])
    } finally {
      signer.close()
    }
    const again = await keysCli(['hsm-generate', '--label', 'treasury'])
    expect(again.code).toBe(1)
    expect(again.err).toMatch(/already holds a key labelled "treasury"/)
    expect((await stack.get('/v1/health')).status).toBe(200)
  })

  it('never gives its private value out: the token refuses CKA_VALUE to the logged-in user', async () => {
    process.env.SOFTHSM2_CONF = token.env.SOFTHSM2_CONF
    const lib = await loadPkcs11Lib()
    const pkcs11 = loadModule(lib, SOFTHSM_MODULE)
    try {
      initialize(lib, pkcs11)
      const session = pkcs11.C_OpenSession(slotOfToken(pkcs11, token.label), lib.CKF_SERIAL_SESSION)
      login(lib, pkcs11, session, token.pin)
      const [key] = await listTokenKeys(lib, pkcs11, session)
      expect(key?.address).toBe(hsmWallet)
      expect(() => pkcs11.C_GetAttributeValue(session, key!.handle, [{ type: lib.CKA_VALUE }])).toThrow(/CKR_ATTRIBUTE_SENSITIVE/)
      const [extractable] = pkcs11.C_GetAttributeValue(session, key!.handle, [{ type: lib.CKA_EXTRACTABLE }])
      expect(extractable!.value).toEqual(Buffer.from([0]))
    } finally {
      pkcs11.C_Finalize()
      pkcs11.close()
    }
  })

  it('signs a native transfer (policy asks for an approval token) and an ERC-20 transfer; both are mined from the key’s address', async () => {
    const i = intent({ type: 'transfer_native', to: BOB, amount: parseEther('1.5').toString() })
    const refused = await stack.post('/v1/tx/sign-and-send', { intent: i })
    expect(refused).toMatchObject({ status: 403, body: { error: 'approval_required' } })
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: i, approvalTokenId: await stack.grant(i) })
    expect(sent.status).toBe(200)
    expect(await recoverTransactionAddress({ serializedTransaction: sent.body.signedTx })).toBe(hsmWallet)
    expect(parseTransaction(sent.body.signedTx).type).toBe('eip1559')
    expect(await receipt(sent.body.txHash)).toMatchObject({ status: 'success', from: hsmWallet.toLowerCase(), to: BOB })
    expect(await clientsFor(anvil.rpcUrl, 8453).pub.getBalance({ address: BOB })).toBe(parseEther('1.5'))

    const erc20 = await stack.post('/v1/tx/sign-and-send', { intent: intent(transferTusd('2500000')) })
    expect(erc20.status).toBe(200)
    expect(await recoverTransactionAddress({ serializedTransaction: erc20.body.signedTx })).toBe(hsmWallet)
    expect(await receipt(erc20.body.txHash)).toMatchObject({ status: 'success', from: hsmWallet.toLowerCase() })
    expect(await erc20Balance(anvil.rpcUrl, tusd, BOB)).toBe(2_500_000n)
  })

  it('signs 200 transactions at once over the session pool: all valid, low s, none refused', async () => {
    const client = createRpcClient({ socketPath: path.join(stack.dataDir, 'run', SIGNER_SOCKET) })
    try {
      const intents = Array.from({ length: 200 }, (_, n) => intent(transferTusd(String(n + 1))))
      const results = await Promise.allSettled(
        intents.map((i, n) =>
          client.call<SignResult>('sign', { intent: i, txRequest: buildTransaction(i, defaultRouterTable()).txRequest, nonce: 1000 + n, gas: '100000', maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000' }),
        ),
      )
      expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([])
      const signed = results.map((r) => (r as PromiseFulfilledResult<SignResult>).value)
      for (const s of signed) {
        const tx = parseTransaction(s.signedTx)
        expect(BigInt(tx.s!) <= HALF_N).toBe(true)
        expect(await recoverTransactionAddress({ serializedTransaction: s.signedTx as `0x02${string}` })).toBe(hsmWallet)
      }
      expect(new Set(signed.map((s) => s.nonce)).size).toBe(200)
    } finally {
      client.close()
    }
  }, 180_000)

  it('answers 503 while the token is gone, without crashing, and signs again when it returns', async () => {
    token.unplug()
    const waiting = intent(transferTusd('7'))
    try {
      for (let n = 0; n < 3; n++) {
        const r = await stack.post('/v1/tx/sign-and-send', { intent: n === 0 ? waiting : intent(transferTusd('8')) })
        expect(r.status).toBe(503)
        expect(r.body).toEqual({ error: 'signer_unavailable', message: expect.stringMatching(/^key_unavailable: .*hardware token.*retry later/) })
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
      expect(stack.signer.child.exitCode).toBeNull()
    } finally {
      token.plugBack()
    }
    const sent = await waitFor(
      async () => {
        const r = await stack.post('/v1/tx/sign-and-send', { intent: waiting })
        return r.status === 200 ? r : null
      },
      { timeoutMs: 10_000, what: 'a signature after the token returned' },
    )
    expect(await receipt(sent.body.txHash)).toMatchObject({ status: 'success', from: hsmWallet.toLowerCase() })
    const history = await stack.get('/v1/approvals/history?limit=200')
    const refusals = (history.body.events as Array<{ event: string; intentId: string; data: any }>).filter((e) => e.intentId === waiting.id && e.event === 'signing_denied')
    expect(refusals.map((e) => [e.data.reason, e.data.backend])).toEqual([['key_unavailable', 'pkcs11']])
    expect(refusals[0]!.data.error).toMatch(/PKCS#11 token "countersign-hsm"/)
  })
})

describe('a signer configured for a token it cannot use', () => {
  /** Starts a signer with only the PKCS#11 backend configured; resolves with its exit code and last stderr line (or 'ready'). */
  function startSigner(env: Record<string, string>): Promise<{ code: number | 'ready'; err: string }> {
    return new Promise((resolve) => {
      const child = execFile(process.execPath, [entries.signer], { env: { PATH: process.env.PATH ?? '', SERVICE_DATA_DIR: tempDataDir(), ...token.env, ...env }, timeout: 30_000 }, (err, _out, stderr) =>
        // The last line: what the signer said when it stopped (log lines come before it).
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, err: stderr.trimEnd().split('\n').at(-1) ?? '' }),
      )
      let seen = ''
      child.stderr!.on('data', (d) => {
        seen += d
        if (/signer ready/.test(seen)) {
          child.kill('SIGTERM')
          resolve({ code: 'ready', err: seen })
        }
      })
    })
  }

  it('stops at start with a message naming the problem, never printing the PIN', async () => {
    const wrongLabel = await startSigner({ SERVICE_PKCS11_TOKEN_LABEL: 'no-such-token' })
    expect(wrongLabel).toEqual({ code: 1, err: 'countersign signer: no PKCS#11 token labelled "no-such-token" is present (SERVICE_PKCS11_TOKEN_LABEL)' })

    const wrongPinFile = path.join(token.dir, 'wrong-pin')
    writeFileSync(wrongPinFile, 'not-the-pin', { mode: 0o600 })
    const wrongPin = await startSigner({ SERVICE_PKCS11_PIN_FILE: wrongPinFile })
    expect(wrongPin).toEqual({ code: 1, err: 'countersign signer: the PKCS#11 token refused the user PIN (SERVICE_PKCS11_PIN_FILE)' })

    const loosePinFile = path.join(token.dir, 'loose-pin')
    copyFileSync(token.pinFile, loosePinFile)
    chmodSync(loosePinFile, 0o644)
    const loose = await startSigner({ SERVICE_PKCS11_PIN_FILE: loosePinFile })
    expect(loose.code).toBe(1)
    expect(loose.err).toMatch(/SERVICE_PKCS11_PIN_FILE .* is readable by group or others \(mode 644\)/)
    expect(loose.err).not.toContain(token.pin)

    const halfConfigured = await startSigner({ SERVICE_PKCS11_TOKEN_LABEL: '' })
    expect(halfConfigured).toEqual({ code: 1, err: expect.stringMatching(/^countersign signer: SERVICE_PKCS11_MODULE is set: set SERVICE_PKCS11_TOKEN_LABEL/) })

    // And the same token, correctly configured, starts.
    expect((await startSigner({})).code).toBe('ready')
  }, 120_000)
})
