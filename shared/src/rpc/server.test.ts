import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { RpcCallContext } from './dispatch.js'
import { rawPeer, sleep, staleSocket, startClient, startServer, tempSocketPath, testMethods, useCleanups } from './rpc.testkit.js'
import { createRpcServer } from './server.js'

const defer = useCleanups()
const mode = (p: string) => statSync(p).mode & 0o777

describe('RPC server: the socket file', () => {
  it('listens on a 0600 socket in a 0700 directory it creates', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p })
    expect(statSync(p).isSocket()).toBe(true)
    expect(mode(p)).toBe(0o600)
    expect(mode(path.dirname(p))).toBe(0o700)
  })

  it('tightens an existing looser directory to 0700', async () => {
    const p = tempSocketPath(defer)
    mkdirSync(path.dirname(p), { mode: 0o755 })
    chmodSync(path.dirname(p), 0o755)
    await startServer(defer, { socketPath: p })
    expect(mode(path.dirname(p))).toBe(0o700)
  })

  it('replaces a stale socket file left by a crashed process', async () => {
    const p = tempSocketPath(defer)
    mkdirSync(path.dirname(p), { mode: 0o700 })
    await staleSocket(p)
    expect(statSync(p).isSocket()).toBe(true)
    await startServer(defer, { socketPath: p })
    expect(await startClient(defer, { socketPath: p }).call('echo', ['ok'])).toEqual(['ok'])
  })

  it('does not delete a regular file at the socket path', async () => {
    const p = tempSocketPath(defer)
    mkdirSync(path.dirname(p), { mode: 0o700 })
    writeFileSync(p, 'precious')
    await expect(createRpcServer({ socketPath: p, methods: testMethods }).listen()).rejects.toThrow(/not a socket/)
    expect(readFileSync(p, 'utf8')).toBe('precious')
  })

  it('does not take the socket of a server that is still running', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p })
    await expect(createRpcServer({ socketPath: p, methods: testMethods }).listen()).rejects.toThrow(/in use/)
    expect(await startClient(defer, { socketPath: p }).call('echo', { still: 'first' })).toEqual({ still: 'first' })
  })
})

describe('RPC server: the wire', () => {
  it('answers an oversized frame with an error and serves the next request on the same connection', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p, maxFrameBytes: 1024 })
    const peer = await rawPeer(defer, p)
    peer.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: { big: 'x'.repeat(5000) } })
    peer.send({ jsonrpc: '2.0', id: 2, method: 'echo', params: { ok: true } })
    expect(await peer.answers(2)).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'request frame too large (limit 1024 bytes)' } },
      { jsonrpc: '2.0', id: 2, result: { ok: true } },
    ])
    expect(peer.socket.destroyed).toBe(false)
  })

  it('answers malformed requests and stays usable; notifications get no answer', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p })
    const peer = await rawPeer(defer, p)
    peer.send('not json')
    peer.send({ jsonrpc: '1.0', id: 2, method: 'echo' })
    peer.send({ jsonrpc: '2.0', id: 3, method: 'echo', params: 5 })
    peer.send({ jsonrpc: '2.0', id: { no: 1 }, method: 'echo' })
    peer.send([{ jsonrpc: '2.0', id: 4, method: 'echo' }])
    peer.send({ jsonrpc: '2.0', method: 'echo', params: {} })
    peer.send({ jsonrpc: '2.0', method: 'missing', params: {} })
    peer.send({ jsonrpc: '2.0', id: 'last', method: 'echo', params: { ok: true } })
    const answers = (await peer.answers(7, 300)) as Array<Record<string, unknown>>
    expect(answers).toHaveLength(6)
    expect(answers[0]).toMatchObject({ id: null, error: { code: -32700, message: 'parse error' } })
    expect(answers[1]).toMatchObject({ id: 2, error: { code: -32600 } })
    expect(answers[2]).toMatchObject({ id: 3, error: { code: -32600 } })
    expect(answers[3]).toMatchObject({ id: null, error: { code: -32600 } })
    expect(answers[4]).toMatchObject({ id: null, error: { code: -32600 } })
    expect(answers[5]).toEqual({ jsonrpc: '2.0', id: 'last', result: { ok: true } })
  })

  it('runs the requests of one connection concurrently and answers each by its id', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p })
    const peer = await rawPeer(defer, p)
    peer.send({ jsonrpc: '2.0', id: 'slow', method: 'slow', params: { ms: 150 } })
    peer.send({ jsonrpc: '2.0', id: 'fast', method: 'echo', params: [1] })
    expect(await peer.answers(2)).toEqual([
      { jsonrpc: '2.0', id: 'fast', result: [1] },
      { jsonrpc: '2.0', id: 'slow', result: 'done' },
    ])
  })

  it('answers a result JSON cannot carry with a generic internal error and logs the cause', async () => {
    const p = tempSocketPath(defer)
    const errors: Array<[string, Record<string, unknown> | undefined]> = []
    const logger = { warn: () => {}, error: (m: string, f?: Record<string, unknown>) => void errors.push([m, f]) }
    await startServer(defer, { socketPath: p, logger, methods: { big: () => ({ n: 10n }), crash: testMethods.crash! } })
    const peer = await rawPeer(defer, p)
    peer.send({ jsonrpc: '2.0', id: 1, method: 'big' })
    peer.send({ jsonrpc: '2.0', id: 2, method: 'crash' })
    const answers = await peer.answers(2)
    expect(answers).toEqual(
      expect.arrayContaining([
        { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'internal error' } },
        { jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'internal error' } },
      ]),
    )
    expect(JSON.stringify(answers)).not.toMatch(/secret|stack|at /)
    expect(errors.map(([, f]) => String(f?.error))).toEqual(expect.arrayContaining([expect.stringMatching(/BigInt/), expect.stringMatching(/secret internal detail/)]))
  })

  it('aborts the signal of running calls when their connection closes', async () => {
    const p = tempSocketPath(defer)
    let aborted: Promise<void> | null = null
    const wait = (_: unknown, ctx: RpcCallContext) => {
      aborted = new Promise<void>((r) => ctx.signal.addEventListener('abort', () => r()))
      return new Promise(() => {})
    }
    await startServer(defer, { socketPath: p, methods: { wait } })
    const peer = await rawPeer(defer, p)
    peer.send({ jsonrpc: '2.0', id: 1, method: 'wait' })
    for (let i = 0; i < 100 && !aborted; i++) await sleep(5)
    expect(aborted).not.toBeNull()
    peer.socket.destroy()
    await aborted
  })

  it('pauses reading while a connection has too many requests running, and still answers them all', async () => {
    const p = tempSocketPath(defer)
    let running = 0
    let peak = 0
    const work = async (params: unknown) => {
      running++
      peak = Math.max(peak, running)
      await sleep(10)
      running--
      return params
    }
    await startServer(defer, { socketPath: p, maxInFlightPerConnection: 4, methods: { work } })
    const peer = await rawPeer(defer, p)
    for (let i = 0; i < 40; i++) peer.send({ jsonrpc: '2.0', id: i, method: 'work', params: [i] })
    const answers = (await peer.answers(40, 5000)) as Array<{ id: number; result: number[] }>
    expect(answers.map((a) => a.id).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i))
    for (const a of answers) expect(a.result).toEqual([a.id])
    expect(peak).toBe(4)
  })

  it('closes a connection whose frame stays incomplete (slowloris) and warns', async () => {
    const p = tempSocketPath(defer)
    const warnings: string[] = []
    await startServer(defer, { socketPath: p, frameTimeoutMs: 100, logger: { warn: (m) => void warnings.push(m), error: () => {} } })
    const idle = await rawPeer(defer, p)
    const slow = await rawPeer(defer, p)
    slow.socket.write('{"jsonrpc":"2.0","id":1,')
    await slow.closed
    expect(warnings).toEqual([expect.stringMatching(/incomplete/)])
    // A connection that sends complete frames, however rarely, stays open.
    idle.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['still here'] })
    expect(await idle.answers(1)).toEqual([{ jsonrpc: '2.0', id: 1, result: ['still here'] }])
  })

  it('drops connections beyond the limit', async () => {
    const p = tempSocketPath(defer)
    const warnings: string[] = []
    await startServer(defer, { socketPath: p, maxConnections: 2, logger: { warn: (m) => void warnings.push(m), error: () => {} } })
    const a = await rawPeer(defer, p)
    const b = await rawPeer(defer, p)
    const c = await rawPeer(defer, p)
    await c.closed
    expect(warnings).toEqual([expect.stringMatching(/too many connections/)])
    a.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['a'] })
    b.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['b'] })
    expect(await a.answers(1)).toEqual([{ jsonrpc: '2.0', id: 1, result: ['a'] }])
    expect(await b.answers(1)).toEqual([{ jsonrpc: '2.0', id: 1, result: ['b'] }])
  })

  it('closes a connection left idle, so that idle peers at the limit do not lock later clients out; a client reconnects', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p, maxConnections: 2, idleTimeoutMs: 150 })
    const client = startClient(defer, { socketPath: p })
    expect(await client.call('echo', ['first'])).toEqual(['first'])
    const hogs = [await rawPeer(defer, p), await rawPeer(defer, p)]
    const closedInTime = await Promise.race([Promise.all(hogs.map((h) => h.closed)).then(() => true), sleep(2000).then(() => false)])
    expect(closedInTime, 'idle connections still open after 2 s').toBe(true)
    // The client's own connection was closed too; its next call connects again.
    expect(await client.call('echo', ['again'])).toEqual(['again'])
    const late = await rawPeer(defer, p)
    late.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['late'] })
    expect(await late.answers(1)).toEqual([{ jsonrpc: '2.0', id: 1, result: ['late'] }])
  })

  it('does not close a connection while a request runs, nor one that keeps sending, however long', async () => {
    const p = tempSocketPath(defer)
    // Margins wide enough for a loaded machine: a send every 50 ms against an idle limit of 300 ms.
    await startServer(defer, { socketPath: p, idleTimeoutMs: 300 })
    const busy = await rawPeer(defer, p)
    busy.send({ jsonrpc: '2.0', id: 1, method: 'slow', params: { ms: 900 } })
    const chatty = await rawPeer(defer, p)
    let isClosed = false
    void chatty.closed.then(() => (isClosed = true))
    for (let i = 0; i < 16; i++) {
      chatty.send({ jsonrpc: '2.0', id: i, method: 'echo', params: [i] })
      await sleep(50)
    }
    expect(await busy.answers(1, 2000)).toEqual([{ jsonrpc: '2.0', id: 1, result: 'done' }])
    expect(isClosed).toBe(false)
    expect((await chatty.answers(16)).length).toBe(16)
    // Once nothing is running, the idle clock runs again.
    expect(await Promise.race([busy.closed.then(() => true), sleep(2000).then(() => false)])).toBe(true)
  })

  it('close() ends open connections and removes the socket file', async () => {
    const p = tempSocketPath(defer)
    const server = createRpcServer({ socketPath: p, methods: testMethods })
    await server.listen()
    const peer = await rawPeer(defer, p)
    await server.close()
    await peer.closed
    expect(() => statSync(p)).toThrow(/ENOENT/)
  })
})

describe('group sockets (one user per process)', () => {
  it('listen 0660 in an existing setgid directory closed to others, and refuse any other directory', async () => {
    const p = tempSocketPath(defer)
    const dir = path.dirname(p)
    mkdirSync(dir, { recursive: true })
    chmodSync(dir, 0o2710)
    const server = createRpcServer({ socketPath: p, socketMode: 0o660, methods: testMethods })
    await server.listen()
    defer(() => server.close())
    expect(statSync(p).mode & 0o777).toBe(0o660)
    expect(statSync(dir).mode & 0o7777).toBe(0o2710)

    const loose = tempSocketPath(defer)
    mkdirSync(path.dirname(loose), { recursive: true })
    chmodSync(path.dirname(loose), 0o775)
    await expect(createRpcServer({ socketPath: loose, socketMode: 0o660, methods: testMethods }).listen()).rejects.toThrow(/setgid and closed to others/)
    const missing = path.join(path.dirname(loose), 'nope', 's.sock')
    await expect(createRpcServer({ socketPath: missing, socketMode: 0o660, methods: testMethods }).listen()).rejects.toThrow(/must exist for a group socket/)
  })
})
