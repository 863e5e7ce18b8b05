import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterEach } from 'vitest'
import { createRpcClient, type RpcClient, type RpcClientOptions } from './client.js'
import { RpcError } from './errors.js'
import { createRpcServer, type RpcServer, type RpcServerOptions } from './server.js'
import type { RpcMethods } from './dispatch.js'

export type Defer = (cleanup: () => unknown) => void

/** Registers an afterEach that runs deferred cleanups, last first. Call once at a test file's top level. */
export function useCleanups(): Defer {
  const cleanups: Array<() => unknown> = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })
  return (c) => void cleanups.push(c)
}

/** A socket path in a fresh temporary directory; the socket's own directory (`run/`) does not exist yet. */
export function tempSocketPath(defer: Defer): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-rpc-'))
  defer(() => rmSync(dir, { recursive: true, force: true }))
  return path.join(dir, 'run', 't.sock')
}

/** Leaves a socket file nobody listens on, as a server killed with SIGKILL does. The directory must exist. */
export async function staleSocket(socketPath: string): Promise<void> {
  const script = `require('net').createServer().listen(${JSON.stringify(socketPath)}, () => console.log('up'))`
  const child = spawn(process.execPath, ['-e', script])
  await new Promise((r) => child.stdout.once('data', r))
  child.kill('SIGKILL')
  await new Promise((r) => child.once('exit', r))
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export const testMethods: RpcMethods = {
  echo: (p) => p,
  add: (p) => {
    const { a, b } = p as { a?: unknown; b?: unknown }
    if (typeof a !== 'number' || typeof b !== 'number') throw new RpcError(-32602, 'a and b must be numbers')
    return a + b
  },
  slow: async (p) => {
    await sleep((p as { ms: number }).ms)
    return 'done'
  },
  refuse: () => {
    throw new RpcError(-32010, 'policy denies', { reason: 'policy_deny' })
  },
  crash: () => {
    throw new Error('secret internal detail')
  },
  nothing: () => undefined,
}

export async function startServer(defer: Defer, opts: Partial<RpcServerOptions> & { socketPath: string }): Promise<RpcServer> {
  const server = createRpcServer({ methods: testMethods, ...opts })
  await server.listen()
  defer(() => server.close())
  return server
}

export function startClient(defer: Defer, opts: RpcClientOptions): RpcClient {
  const client = createRpcClient(opts)
  defer(() => client.close())
  return client
}

export interface RawPeer {
  socket: net.Socket
  /** Writes a line as is (a string) or as JSON (anything else), newline added. */
  send(line: unknown): void
  /** The first `n` answers, waiting up to `waitMs` for them. */
  answers(n: number, waitMs?: number): Promise<unknown[]>
  closed: Promise<void>
}

/** A line-oriented socket that sends what a well-behaved client never would. */
export async function rawPeer(defer: Defer, socketPath: string): Promise<RawPeer> {
  const socket = net.createConnection(socketPath)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  socket.on('error', () => {})
  defer(() => socket.destroy())
  const closed = new Promise<void>((r) => socket.once('close', () => r()))
  let buf = ''
  const lines: unknown[] = []
  socket.on('data', (d: Buffer) => {
    buf += d.toString('utf8')
    let nl
    while ((nl = buf.indexOf('\n')) !== -1) {
      lines.push(JSON.parse(buf.slice(0, nl)))
      buf = buf.slice(nl + 1)
    }
  })
  return {
    socket,
    closed,
    send: (line) => void socket.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`),
    async answers(n, waitMs = 2000) {
      const until = Date.now() + waitMs
      while (lines.length < n && Date.now() < until) await sleep(5)
      return lines.slice(0, n)
    },
  }
}
