// A real local chain for system tests: the anvil binary from its npm platform
// package, spawned directly (never through npx, whose wrapper outlives kill).
import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { freePort, killOnExit, waitFor } from './processes.js'

const require = createRequire(import.meta.url)

export function anvilBinary(): string {
  return path.join(path.dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil')
}

export interface Anvil {
  rpcUrl: string
  chainId: number
  port: number
  child: ChildProcess
  stop(): Promise<void>
}

/** anvil's default accounts (mnemonic "test test … junk"); funded with 10,000 ETH on every fresh chain. */
export const anvilAccounts = [
  { address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' },
  { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' },
  { address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', privateKey: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a' },
  { address: '0x90F79bf6EB2c4f870365E785982E1f101E93b906', privateKey: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6' },
] as const

export async function rpc<T = unknown>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const body = (await res.json()) as { result?: T; error?: { message: string } }
  if (body.error) throw new Error(`${method}: ${body.error.message}`)
  return body.result as T
}

export async function startAnvil(opts: { chainId: number; port?: number }): Promise<Anvil> {
  const port = opts.port ?? (await freePort())
  const child = spawn(anvilBinary(), ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(opts.chainId), '--silent'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  killOnExit(child)
  let stderr = ''
  child.stderr?.on('data', (d) => (stderr += d))
  const rpcUrl = `http://127.0.0.1:${port}`
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`anvil exited with ${child.exitCode}: ${stderr}`)
      return (await rpc<string>(rpcUrl, 'eth_chainId').catch(() => null)) !== null
    },
    { timeoutMs: 10_000, what: `anvil on port ${port}` },
  )
  return {
    rpcUrl,
    chainId: opts.chainId,
    port,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        const force = setTimeout(() => child.kill('SIGKILL'), 3000)
        child.once('exit', () => {
          clearTimeout(force)
          resolve()
        })
        child.kill('SIGTERM')
      }),
  }
}

export async function setBalance(rpcUrl: string, address: string, wei: bigint): Promise<void> {
  await rpc(rpcUrl, 'anvil_setBalance', [address, `0x${wei.toString(16)}`])
}
