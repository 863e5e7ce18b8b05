import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createRpcClient, type RpcClient } from './client.js'
import { RpcError, RpcTimeoutError, RpcUnavailableError } from './errors.js'
import { createRpcServer, type RpcServer } from './server.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

function sockPath() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-rpc-'))
  return path.join(dir, 'run', 't.sock')
}

const methods = {
  echo: (p: unknown) => p,
  add: (p: unknown) => {
    const { a, b } = p as { a: unknown; b: unknown }
    if (typeof a !== 'number' || typeof b !== 'number') throw new RpcError(-32602, 'a and b must be numbers')
    return a + b
  },
  slow: async (p: unknown) => {
    await new Promise((r) => setTimeout(r, (p as { ms: number }).ms))
    return 'done'
  },
  refuse: () => {
    throw new RpcError(-32010, 'policy denies', { reason: 'policy_deny' })
  },
  crash: () => {
    throw new Error('secret internal detail')
  },
}

async function serve(socketPath: string, maxFrameBytes?: number): Promise<RpcServer> {
  const server = createRpcServer({ socketPath, methods, ...(maxFrameBytes ? { maxFrameBytes } : {}) })
  await server.listen()
  cleanups.push(() => server.close())
  return server
}

function client(socketPath: string, timeoutMs = 2000): RpcClient {
  const c = createRpcClient({ socketPath, timeoutMs })
  cleanups.push(() => c.close())
  return c
}

/** Raw line-oriented socket, to send what a well-behaved client never would. */
async function raw(socketPath: string) {
  const s = net.createConnection(socketPath)
  await new Promise((r) => s.once('connect', r))
  cleanups.push(() => s.destroy())
  let buf = ''
  const lines: unknown[] = []
  s.on('data', (d) => {
    buf += d.toString()
    let nl
    while ((nl = buf.indexOf('\n')) !== -1) {
      lines.push(JSON.parse(buf.slice(0, nl)))
      buf = buf.slice(nl + 1)
    }
  })
  const next = async (n: number) => {
    for (let i = 0; i < 200 && lines.length < n; i++) await new Promise((r) => setTimeout(r, 10))
    return lines.slice(0, n)
  }
  return { s, next }
}

describe('JSON-RPC over a Unix socket', () => {
  it('round-trips, and answers 200 concurrent calls by id', async () => {
    const p = sockPath()
    await serve(p)
    const c = client(p)
    expect(await c.call('echo', { x: [1, 'two'] })).toEqual({ x: [1, 'two'] })
    const results = await Promise.all(Array.from({ length: 200 }, (_, n) => c.call<number>('add', { a: n, b: 1 })))
    expect(results).toEqual(Array.from({ length: 200 }, (_, n) => n + 1))
  })

  it('socket is 0600 in a 0700 directory', async () => {
    const p = sockPath()
    await serve(p)
    expect(statSync(p).mode & 0o777).toBe(0o600)
    expect(statSync(path.dirname(p)).mode & 0o777).toBe(0o700)
  })

  it('maps errors: not found, invalid params, application errors with data, and internal errors without details', async () => {
    const p = sockPath()
    await serve(p)
    const c = client(p)
    await expect(c.call('nope', {})).rejects.toMatchObject({ code: -32601 })
    await expect(c.call('add', { a: 'x', b: 1 })).rejects.toMatchObject({ code: -32602, message: 'a and b must be numbers' })
    await expect(c.call('refuse', {})).rejects.toMatchObject({ code: -32010, data: { reason: 'policy_deny' } })
    const crash = await c.call('crash', {}).catch((e: RpcError) => e)
    expect(crash).toBeInstanceOf(RpcError)
    expect((crash as RpcError).code).toBe(-32603)
    expect((crash as RpcError).message).toBe('internal error')
  })

  it('answers malformed and oversized frames with errors and keeps the connection usable', async () => {
    const p = sockPath()
    await serve(p, 1024)
    const { s, next } = await raw(p)
    s.write('not json\n')
    s.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: 'x'.repeat(5000) }) + '\n')
    s.write(JSON.stringify({ jsonrpc: '1.0', id: 2, method: 'echo' }) + '\n')
    s.write(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'echo', params: 5 }) + '\n')
    s.write(JSON.stringify({ jsonrpc: '2.0', method: 'echo', params: {} }) + '\n') // notification: no answer
    s.write(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'echo', params: { ok: true } }) + '\n')
    const answers = (await next(5)) as Array<{ id: unknown; error?: { code: number }; result?: unknown }>
    expect(answers[0]).toMatchObject({ id: null, error: { code: -32700 } })
    expect(answers[1]).toMatchObject({ id: null, error: { code: -32600, message: 'request frame too large' } })
    expect(answers[2]).toMatchObject({ id: 2, error: { code: -32600 } })
    expect(answers[3]).toMatchObject({ id: 3, error: { code: -32600 } })
    expect(answers[4]).toEqual({ jsonrpc: '2.0', id: 4, result: { ok: true } })
  })

  it('times out a slow call and ignores its late answer', async () => {
    const p = sockPath()
    await serve(p)
    const c = client(p, 100)
    await expect(c.call('slow', { ms: 300 })).rejects.toBeInstanceOf(RpcTimeoutError)
    expect(await c.call('slow', { ms: 1 }, { timeoutMs: 1000 })).toBe('done')
  })

  it('fails fast when nothing listens', async () => {
    const c = client(sockPath())
    const started = Date.now()
    await expect(c.call('echo', {})).rejects.toBeInstanceOf(RpcUnavailableError)
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it('a server stopped under a connected client fails the call in flight; a restarted one is used again', async () => {
    const p = sockPath()
    const first = createRpcServer({ socketPath: p, methods })
    await first.listen()
    const c = client(p)
    expect(await c.call('echo', { n: 1 })).toEqual({ n: 1 })
    const inFlight = c.call('slow', { ms: 500 }).catch((e: unknown) => e)
    await new Promise((r) => setTimeout(r, 50))
    await first.close()
    expect(await inFlight).toBeInstanceOf(RpcUnavailableError)
    await expect(c.call('echo', { n: 2 })).rejects.toBeInstanceOf(RpcUnavailableError)
    await serve(p)
    expect(await c.call('echo', { n: 3 })).toEqual({ n: 3 })
  })

  it('replaces a stale socket file but never deletes a regular file', async () => {
    const p = sockPath()
    mkdirSync(path.dirname(p), { recursive: true, mode: 0o700 })
    // A process killed with SIGKILL leaves its socket file behind.
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(p)}, () => console.log('up'))`])
    await new Promise((r) => child.stdout.once('data', r))
    child.kill('SIGKILL')
    await new Promise((r) => child.once('exit', r))
    expect(statSync(p).isSocket()).toBe(true)
    const fresh = createRpcServer({ socketPath: p, methods })
    await fresh.listen()
    cleanups.push(() => fresh.close())
    expect(await client(p).call('echo', ['ok'])).toEqual(['ok'])

    const regular = path.join(path.dirname(p), 'regular')
    writeFileSync(regular, 'precious')
    await expect(createRpcServer({ socketPath: regular, methods }).listen()).rejects.toThrow(/not a socket/)
    expect(statSync(regular).isFile()).toBe(true)
  })
})
