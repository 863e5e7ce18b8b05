// countersign-mcp as an MCP host ends it: the host closes the server's stdin
// (the MCP stdio shutdown) or stops reading its stdout. The server must leave
// at once, quietly, even with a tool call still waiting on the gateway.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../clients/mcp/bin/countersign-mcp.js')
const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c()
})

/** A gateway that takes every request and never answers it: a tool call waits as on an operator. */
async function silentGateway(): Promise<{ url: string; seen: () => number }> {
  let seen = 0
  const server: Server = createServer(() => {
    seen++
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  cleanups.push(() => {
    server.closeAllConnections()
    return new Promise((r) => server.close(r))
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen: () => seen }
}

function startMcp(url: string): { child: ChildProcessWithoutNullStreams; stderr: () => string; send: (msg: object) => void } {
  const child = spawn(process.execPath, [bin], { env: { PATH: process.env.PATH ?? '', COUNTERSIGN_URL: url, COUNTERSIGN_WALLET: WALLET } })
  cleanups.push(() => child.kill('SIGKILL'))
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  child.stdout.on('error', () => undefined)
  child.stdin.on('error', () => undefined)
  return { child, stderr: () => stderr, send: (msg) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`) }
}

/** initialize, initialized, then a native transfer the silent gateway holds. */
async function callThatWaits(mcp: ReturnType<typeof startMcp>, gateway: { seen: () => number }) {
  mcp.send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio-test', version: '1' } } })
  const [first] = (await once(mcp.child.stdout, 'data')) as [Buffer]
  expect(JSON.parse(first.toString().split('\n')[0]!).id).toBe(1)
  mcp.send({ method: 'notifications/initialized' })
  mcp.send({ id: 2, method: 'tools/call', params: { name: 'countersign_transfer_native', arguments: { to: '0x000000000000000000000000000000000000bEEF', amount: '1000' } } })
  const deadline = Date.now() + 10_000
  while (gateway.seen() === 0) {
    if (Date.now() > deadline) throw new Error(`the tool call never reached the gateway; stderr: ${mcp.stderr()}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** The exit code, or 'running' if the process is still there after `ms`. */
async function exitWithin(child: ChildProcessWithoutNullStreams, ms: number): Promise<number | null | 'running'> {
  if (child.exitCode !== null) return child.exitCode
  const timer = new Promise<'running'>((r) => setTimeout(() => r('running'), ms))
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  return Promise.race([exited, timer])
}

describe('countersign-mcp when its host goes away', () => {
  it('exits 0 as soon as the host closes its stdin, with a tool call still waiting on the gateway', async () => {
    const gateway = await silentGateway()
    const mcp = startMcp(gateway.url)
    await callThatWaits(mcp, gateway)
    mcp.child.stdin.end()
    expect(await exitWithin(mcp.child, 5000)).toBe(0)
    expect(mcp.stderr()).toContain('countersign-mcp: the host closed stdin; leaving')
  })

  it('exits 0 without a stack trace when the host stops reading its stdout', async () => {
    const gateway = await silentGateway()
    const mcp = startMcp(gateway.url)
    await callThatWaits(mcp, gateway)
    mcp.child.stdout.destroy()
    // Something to answer: the answer's write fails with EPIPE.
    mcp.send({ id: 3, method: 'tools/list' })
    expect(await exitWithin(mcp.child, 5000)).toBe(0)
    expect(mcp.stderr()).not.toMatch(/\n\s+at /)
  })
})
