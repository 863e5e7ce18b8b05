// A real local chain for system tests: the anvil binary from its npm platform
// package, spawned directly (never through npx: killing the npx wrapper leaves
// anvil running). Automine (no --block-time): every transaction is mined in its
// own block as soon as it arrives, so a receipt is available immediately.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { Address, Hex } from 'viem'
import { freePort, killOnExit } from './processes.js'

const require = createRequire(import.meta.url)

export function anvilBinary(): string {
  const bin = path.join(path.dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil')
  if (!existsSync(bin)) throw new Error(`anvil binary missing at ${bin}`)
  return bin
}

export interface Anvil {
  rpcUrl: string
  chainId: number
  port: number
  pid: number
  child: ChildProcess
  /** SIGTERM, then SIGKILL after 3 s; resolves once the process has exited. Safe to call twice. */
  stop(): Promise<void>
}

export interface DevAccount {
  address: Address
  privateKey: Hex
}

/** The mnemonic anvil derives its default accounts from (m/44'/60'/0'/0/i). */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk'

/** anvil's first default accounts; each holds 10,000 ETH on a fresh chain. */
export const anvilDevAccounts = [
  { address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' },
  { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' },
  { address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', privateKey: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a' },
  { address: '0x90F79bf6EB2c4f870365E785982E1f101E93b906', privateKey: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6' },
  { address: '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65', privateKey: '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a' },
] as const satisfies readonly DevAccount[]

/** Earlier name of anvilDevAccounts, kept for the existing tests. */
export const anvilAccounts = anvilDevAccounts

let rpcId = 0

/** One JSON-RPC call over HTTP; throws on a transport error or a JSON-RPC error. */
export async function rpc<T = unknown>(rpcUrl: string, method: string, params: unknown[] = [], opts: { timeoutMs?: number } = {}): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
  })
  if (!res.ok) throw new Error(`${method}: HTTP ${res.status} from ${rpcUrl}`)
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string } }
  if (body.error) throw new Error(`${method}: ${body.error.message} (code ${body.error.code})`)
  return body.result as T
}

const START_TIMEOUT_MS = 10_000
const STOP_GRACE_MS = 3_000
const MAX_PORT_ATTEMPTS = 5

class PortInUse extends Error {}

async function launch(chainId: number, port: number, extraArgs: string[]): Promise<Anvil> {
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId), '--silent', ...extraArgs]
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] })
  killOnExit(child)
  let output = ''
  const keep = (d: Buffer) => {
    output = (output + d.toString('utf8')).slice(-8_000)
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  let spawnError: Error | undefined
  child.once('error', (err) => {
    spawnError = err
  })
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()))
  const gone = () => child.exitCode !== null || child.signalCode !== null || spawnError !== undefined

  const stop = async (): Promise<void> => {
    if (!gone()) {
      const force = setTimeout(() => {
        if (!gone()) child.kill('SIGKILL')
      }, STOP_GRACE_MS)
      child.kill('SIGTERM')
      await exited
      clearTimeout(force)
    } else if (spawnError === undefined) {
      await exited
    }
  }

  const rpcUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    if (gone()) {
      await Promise.race([exited, new Promise((r) => setTimeout(r, 200))])
      const why = spawnError ? `could not be spawned: ${spawnError.message}` : `exited (code ${child.exitCode}, signal ${child.signalCode})`
      if (/address already in use/i.test(output)) throw new PortInUse(`anvil (chain ${chainId}, port ${port}) ${why} while starting: the port is taken: ${output.trim()}`)
      throw new Error(`anvil (chain ${chainId}, port ${port}) ${why} while starting; its output:\n${output.trim() || '(none)'}`)
    }
    const answer = await rpc<string>(rpcUrl, 'eth_chainId', [], { timeoutMs: 1_000 }).catch(() => null)
    // Only trust the answer if our process is still alive: another server that
    // took the port first could otherwise answer in its place.
    if (answer !== null && !gone()) {
      if (Number(answer) !== chainId) {
        await stop()
        throw new PortInUse(`port ${port} answered with chain ${Number(answer)}, not ${chainId}: another node holds it`)
      }
      return { rpcUrl, chainId, port, pid: child.pid!, child, stop }
    }
    if (Date.now() >= deadline) {
      await stop()
      throw new Error(`anvil (chain ${chainId}, port ${port}) did not answer eth_chainId within ${START_TIMEOUT_MS} ms; its output:\n${output.trim() || '(none)'}`)
    }
    await new Promise((r) => setTimeout(r, 20))
  }
}

/**
 * Starts anvil on 127.0.0.1 with the given chain id and waits until it answers
 * eth_chainId (10 s at most). Without a port, a free one is picked, and a
 * different one tried if it was taken in the meantime. The process is killed
 * when the test process exits; call stop() to end it earlier.
 */
export async function startAnvil(opts: { chainId: number; port?: number; args?: string[] }): Promise<Anvil> {
  const extra = opts.args ?? []
  if (opts.port !== undefined) return launch(opts.chainId, opts.port, extra)
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    try {
      return await launch(opts.chainId, port, extra)
    } catch (err) {
      if (!(err instanceof PortInUse) || attempt >= MAX_PORT_ATTEMPTS) throw err
    }
  }
}

/** Sets an account's native balance (anvil_setBalance). */
export async function fundAccount(rpcUrl: string, address: Address | string, wei: bigint): Promise<void> {
  await rpc(rpcUrl, 'anvil_setBalance', [address, `0x${wei.toString(16)}`])
}

/** Earlier name of fundAccount, kept for the existing tests. */
export const setBalance = fundAccount
