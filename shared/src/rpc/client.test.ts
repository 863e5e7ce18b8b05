import { mkdirSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createRpcClient } from './client.js'
import { RpcError, RpcTimeoutError, RpcUnavailableError } from './errors.js'
import { rawPeer, sleep, staleSocket, startClient, startServer, tempSocketPath, testMethods, useCleanups } from './rpc.testkit.js'
import { createRpcServer } from './server.js'

const defer = useCleanups()

const rejection = (p: Promise<unknown>) => p.then(
  (v) => {
    throw new Error(`expected a rejection, got ${JSON.stringify(v)}`)
  },
  (e: unknown) => e as Error,
)

const pipes = () => process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap').length

describe('RPC client', () => {
  it('round-trips params and results', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p })
    const c = startClient(defer, { socketPath: p })
    expect(await c.call('echo', { x: [1, 'two', { 'ü€': null }] })).toEqual({ x: [1, 'two', { 'ü€': null }] })
    expect(await c.call('echo', [true])).toEqual([true])
    expect(await c.call('nothing', {})).toBeNull()
  })

  it('multiplexes 200 concurrent calls on one connection, each answered with its own result', async () => {
    const p = tempSocketPath(defer)
    const methods = {
      ...testMethods,
      jitter: async (params: unknown) => {
        const { n } = params as { n: number }
        await sleep((n * 7) % 23)
        return n * 2
      },
    }
    const server = createRpcServer({ socketPath: p, methods })
    await server.listen()
    defer(() => server.close())
    const c = startClient(defer, { socketPath: p })
    const results = await Promise.all(Array.from({ length: 200 }, (_, n) => c.call<number>('jitter', { n })))
    expect(results).toEqual(Array.from({ length: 200 }, (_, n) => n * 2))
  })

  it('rejects with RpcError: method not found, invalid params, application errors with data', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p })
    const c = startClient(defer, { socketPath: p })
    const notFound = await rejection(c.call('nope', {}))
    expect(notFound).toBeInstanceOf(RpcError)
    expect(notFound).toMatchObject({ code: -32601, message: 'method not found: nope' })
    await expect(c.call('add', { a: 'x', b: 1 })).rejects.toMatchObject({ code: -32602, message: 'a and b must be numbers' })
    await expect(c.call('refuse', {})).rejects.toMatchObject({ code: -32010, message: 'policy denies', data: { reason: 'policy_deny' } })
  })

  it('gets a generic -32603 for a handler that throws a plain Error; the detail goes to the server log only', async () => {
    const p = tempSocketPath(defer)
    const seen: unknown[] = []
    await startServer(defer, { socketPath: p, onInternalError: (err) => void seen.push(err) })
    const c = startClient(defer, { socketPath: p })
    const err = await rejection(c.call('crash', {}))
    expect(err).toBeInstanceOf(RpcError)
    expect(err).toMatchObject({ code: -32603, message: 'internal error', data: undefined })
    expect(JSON.stringify({ ...err, message: err.message })).not.toContain('secret')
    expect(seen).toEqual([expect.objectContaining({ message: 'secret internal detail' })])
  })

  it('times a call out with RpcTimeoutError, ignores the late answer, and carries on', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p })
    const c = startClient(defer, { socketPath: p, timeoutMs: 100 })
    const started = Date.now()
    const err = await rejection(c.call('slow', { ms: 300 }))
    expect(err).toBeInstanceOf(RpcTimeoutError)
    expect(err.message).toMatch(/slow .* timed out after 100 ms/)
    expect(Date.now() - started).toBeLessThan(250)
    const later = c.call('echo', ['after'], { timeoutMs: 1000 })
    await sleep(300) // the late 'done' arrives meanwhile and is dropped
    expect(await later).toEqual(['after'])
    expect(await c.call('slow', { ms: 1 }, { timeoutMs: 1000 })).toBe('done')
  })

  it('fails fast with RpcUnavailableError naming the socket when there is no socket file or nobody listens', async () => {
    const p = tempSocketPath(defer)
    const c = startClient(defer, { socketPath: p })
    const started = Date.now()
    const missing = await rejection(c.call('echo', {}))
    expect(missing).toBeInstanceOf(RpcUnavailableError)
    expect(missing.message).toContain(p)
    expect(missing.message).toMatch(/no socket file/)
    expect((missing as RpcUnavailableError).sent).toBe(false) // never reached a peer: it did not run

    expect(Date.now() - started).toBeLessThan(1000)

    // A socket file nobody listens on (what a crashed server leaves): refused.
    mkdirSync(path.dirname(p), { recursive: true })
    await staleSocket(p)
    const again = Date.now()
    const refused = await rejection(c.call('echo', {}))
    expect(refused).toBeInstanceOf(RpcUnavailableError)
    expect(refused.message).toContain(p)
    expect(refused.message).toMatch(/refused/)
    expect((refused as RpcUnavailableError).sent).toBe(false)
    expect(Date.now() - again).toBeLessThan(1000)
  })

  it('fails the call in flight with RpcUnavailableError when the server goes away, and reconnects to a restarted server', async () => {
    const p = tempSocketPath(defer)
    const first = createRpcServer({ socketPath: p, methods: testMethods })
    await first.listen()
    const c = startClient(defer, { socketPath: p })
    expect(await c.call('echo', { n: 1 })).toEqual({ n: 1 })
    const inFlight = rejection(c.call('slow', { ms: 500 }))
    await sleep(50)
    await first.close()
    const err = await inFlight
    expect(err).toBeInstanceOf(RpcUnavailableError)
    expect(err.message).toContain(p)
    expect((err as RpcUnavailableError).sent).toBe(true) // it was running on the server when the connection dropped
    await expect(c.call('echo', { n: 2 })).rejects.toBeInstanceOf(RpcUnavailableError)
    await startServer(defer, { socketPath: p })
    expect(await c.call('echo', { n: 3 })).toEqual({ n: 3 })
  })

  it('does not retry a call whose connection dropped', async () => {
    const p = tempSocketPath(defer)
    let runs = 0
    const server = createRpcServer({
      socketPath: p,
      methods: {
        once: async () => {
          runs++
          await sleep(1000)
          return 'never'
        },
      },
    })
    await server.listen()
    const c = startClient(defer, { socketPath: p })
    const pending = rejection(c.call('once', {}))
    await sleep(50)
    await server.close()
    expect(await pending).toBeInstanceOf(RpcUnavailableError)
    await startServer(defer, { socketPath: p, methods: { once: () => ++runs } })
    await sleep(50)
    expect(runs).toBe(1)
  })

  it('ignores answers it cannot attribute, and garbage from a misbehaving server', async () => {
    const p = tempSocketPath(defer)
    mkdirSync(path.dirname(p), { recursive: true })
    const liar = net.createServer((s) => {
      s.on('data', (d: Buffer) => {
        const req = JSON.parse(d.toString().trim()) as { id: number }
        s.write('garbage\n{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}\n')
        s.write(`{"jsonrpc":"2.0","id":${req.id + 1000},"result":"wrong"}\n`)
        s.write(`{"jsonrpc":"2.0","id":${req.id},"result":"right"}\n`)
      })
    })
    await new Promise<void>((r) => liar.listen(p, r))
    defer(() => new Promise((r) => liar.close(r)))
    const c = startClient(defer, { socketPath: p })
    expect(await c.call('x', {})).toBe('right')
  })

  it('rejects params JSON cannot carry before sending anything, and stays usable', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p })
    const c = startClient(defer, { socketPath: p, timeoutMs: 500 })
    await expect(c.call('echo', { n: 1n })).rejects.toThrow(TypeError)
    expect(await c.call('echo', { n: '1' })).toEqual({ n: '1' })
  })

  it('close() fails calls in flight and refuses later calls', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p })
    const c = createRpcClient({ socketPath: p })
    expect(await c.call('echo', [1])).toEqual([1])
    const pending = rejection(c.call('slow', { ms: 300 }))
    await sleep(20)
    c.close()
    expect(await pending).toMatchObject({ name: 'RpcUnavailableError', message: expect.stringMatching(/client closed/) })
    await expect(c.call('echo', [2])).rejects.toThrow(/client closed/)

    const early = createRpcClient({ socketPath: p })
    const connecting = rejection(early.call('echo', [3]))
    early.close()
    expect(await connecting).toBeInstanceOf(RpcUnavailableError)
  })

  it('holds the event loop open only while calls are in flight', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p })
    const c = startClient(defer, { socketPath: p })
    await c.call('echo', [])
    await sleep(20)
    const idle = pipes()
    const pending = c.call('slow', { ms: 100 })
    await sleep(20)
    expect(pipes()).toBe(idle + 1)
    await pending
    expect(pipes()).toBe(idle)
  })

  it('a server answering a raw peer and a client at once keeps their ids apart', async () => {
    const p = tempSocketPath(defer)
    await startServer(defer, { socketPath: p })
    const peer = await rawPeer(defer, p)
    const c = startClient(defer, { socketPath: p })
    peer.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: ['peer'] })
    expect(await c.call('echo', ['client'])).toEqual(['client'])
    expect(await peer.answers(1)).toEqual([{ jsonrpc: '2.0', id: 1, result: ['peer'] }])
  })
})
