// Starts countersign's real processes (compiled JS) against real chains.
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import type { Address } from 'viem'
import { generatePrivateKey } from 'viem/accounts'
import { createRpcClient, GRANT_SOCKET, intentHash, normalizeIntent, type GrantResult, type TxIntent } from '@countersign/shared'
import { Keystore } from '../../services/signer/src/keystore/keystore.js'
import { FAST_SCRYPT } from '../../services/signer/src/keystore/testkeys.testkit.js'
import { freePort, repoRoot, spawnService, tempDataDir, waitFor, type ServiceProcess } from './processes.js'

const run = promisify(execFile)

export const entries = {
  gateway: path.join(repoRoot, 'services/gateway/dist/main.js'),
  signer: path.join(repoRoot, 'services/signer/dist/main.js'),
  keys: path.join(repoRoot, 'services/signer/dist/cli/keys.js'),
  approver: path.join(repoRoot, 'services/approver/dist/main.js'),
}

export const PASSPHRASE = 'correct horse battery staple'

/** Imports a private key through the real key CLI (stdin, never argv). */
export async function importKey(dataDir: string, privateKey: string, passphrase = PASSPHRASE): Promise<string> {
  const child = execFile(process.execPath, [entries.keys, 'import', '--data-dir', dataDir], {
    env: { PATH: process.env.PATH ?? '', SERVICE_DEMO_PASSPHRASE: passphrase },
  })
  child.stdin!.end(privateKey + '\n')
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (err += d))
  const code = await new Promise<number | null>((r) => child.once('exit', r))
  if (code !== 0) throw new Error(`key import failed (${code}): ${err}`)
  return out.trim()
}

/**
 * Gives the signer `count` fresh keys, written straight into the keystore with
 * the cheapest scrypt a key file may have: for tests that need many wallets
 * the signer holds (the key CLI's production scrypt would take minutes for a
 * hundred). The signer unlocks them when it starts. Their addresses, checksummed.
 */
export async function addFastKeys(dataDir: string, count: number, passphrase = PASSPHRASE): Promise<Address[]> {
  const keystore = new Keystore(path.join(dataDir, 'keystore'))
  const saved = await Promise.all(Array.from({ length: count }, () => keystore.save(generatePrivateKey(), passphrase, { scrypt: FAST_SCRYPT })))
  return saved.map((entry) => entry.address as Address)
}

export function writePolicy(dataDir: string, policy: Record<string, unknown>): string {
  const file = path.join(dataDir, 'policy.json')
  writeFileSync(file, JSON.stringify(policy))
  return file
}

export interface StackOptions {
  dataDir?: string
  rpcUrls?: Record<number, string>
  policy?: Record<string, unknown>
  passphrase?: string
  env?: Record<string, string>
}

export class Stack {
  gateway!: ServiceProcess
  signer!: ServiceProcess
  approver?: ServiceProcess
  port = 0
  approverPort = 0
  readonly dataDir: string
  readonly env: Record<string, string>

  constructor(readonly opts: StackOptions = {}) {
    this.dataDir = opts.dataDir ?? tempDataDir()
    const policyFile = writePolicy(this.dataDir, opts.policy ?? {})
    this.env = {
      SERVICE_DATA_DIR: this.dataDir,
      SERVICE_POLICY_FILE: policyFile,
      SERVICE_LOG_LEVEL: 'warn',
      SERVICE_DEMO_PASSPHRASE: opts.passphrase ?? PASSPHRASE,
      ...Object.fromEntries(Object.entries(opts.rpcUrls ?? {}).map(([id, url]) => [`SERVICE_RPC_URL_${id}`, url])),
      ...opts.env,
    }
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  async startSigner(): Promise<ServiceProcess> {
    this.signer = spawnService('signer', entries.signer, this.env)
    await this.signer.waitForLine(/signer ready/, 20_000)
    return this.signer
  }

  async startApprover(env: Record<string, string> = {}): Promise<ServiceProcess> {
    this.approverPort = this.approverPort || (await freePort())
    this.approver = spawnService('approver', entries.approver, { ...this.env, SERVICE_APPROVER_PORT: String(this.approverPort), ...env })
    await this.approver.waitForLine(/approver ready/, 20_000)
    return this.approver
  }

  get operatorToken(): string {
    return readFileSync(path.join(this.dataDir, 'operator-token'), 'utf8').trim()
  }

  async startGateway(): Promise<ServiceProcess> {
    this.port = this.port || (await freePort())
    this.approverPort = this.approverPort || (await freePort())
    this.gateway = spawnService('gateway', entries.gateway, { ...this.env, SERVICE_PORT: String(this.port), SERVICE_APPROVER_PORT: String(this.approverPort) })
    await waitFor(() => fetch(`${this.url}/v1/health`).then((r) => r.ok).catch(() => false), { timeoutMs: 15_000, what: 'gateway health' })
    return this.gateway
  }

  async start(opts: { approver?: boolean; approverEnv?: Record<string, string> } = {}): Promise<this> {
    await this.startSigner()
    if (opts.approver) await this.startApprover(opts.approverEnv)
    await this.startGateway()
    return this
  }

  async stop(): Promise<void> {
    await Promise.all([this.gateway?.stop(), this.approver?.stop(), this.signer?.stop()])
  }

  async post(pathname: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    const { status, body: answer } = await this.postWithHeaders(pathname, body, headers)
    return { status, body: answer }
  }

  /** post, and the response's headers. */
  async postWithHeaders(pathname: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
    const res = await fetch(this.url + pathname, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
    return { status: res.status, body: await res.json(), headers: res.headers }
  }

  async decide(requestId: string, approved: boolean, token: string | null = this.operatorToken): Promise<{ status: number; body: any }> {
    return this.post(`/v1/approvals/${requestId}/decide`, { approved }, token ? { authorization: `Bearer ${token}` } : {})
  }

  async get(pathname: string): Promise<{ status: number; body: any }> {
    const res = await fetch(this.url + pathname)
    return { status: res.status, body: await res.json() }
  }

  /** Plays the approver: mints a token over grant.sock for the intent's txRequestHash and intentHash (of the intent as the gateway hands it on). */
  async grant(intent: TxIntent): Promise<string> {
    const built = await this.post('/v1/tx/build', intent)
    if (built.status !== 200) throw new Error(`build failed: ${JSON.stringify(built.body)}`)
    const client = createRpcClient({ socketPath: path.join(this.dataDir, 'run', GRANT_SOCKET) })
    try {
      const r = await client.call<GrantResult>('grantApproval', { txRequestHash: built.body.txRequestHash, intentHash: intentHash(normalizeIntent(intent)), intentId: intent.id })
      return r.approvalTokenId
    } finally {
      client.close()
    }
  }

  async auditVerify(): Promise<string> {
    const { stdout } = await run(process.execPath, [path.join(repoRoot, 'shared/dist/server/audit/cli.js'), 'verify', '--data-dir', this.dataDir])
    return stdout.trim()
  }
}
