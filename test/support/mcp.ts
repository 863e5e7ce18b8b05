// countersign-mcp as an MCP host runs it (the command npm linked from the
// committed launcher, over stdio), against the real stack on anvil with the
// local TUSD/TKA Uniswap pool, for anvil's first account.
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Address } from 'viem'
import { deployUniswapFixture } from '../../scripts/uniswap-fixture.mjs'
import { anvilAccounts, startAnvil, type Anvil } from './anvil.js'
import { repoRoot } from './processes.js'
import { importKey, Stack } from './stack.js'

export const MCP_WALLET = anvilAccounts[0].address as Address

export interface McpStack {
  anvil: Anvil
  uni: Awaited<ReturnType<typeof deployUniswapFixture>>
  stack: Stack
  mcp: Client
  /** What the server wrote to stderr so far. */
  log: () => string
  stop(): Promise<void>
}

/** The chain, the pool (the wallet funded with both tokens), the three processes with `tusdCap` per TUSD transfer, and a connected client. */
export async function startMcpStack(opts: { clientName: string; tusdCap: bigint; maxTxPerHour: number; approverEnv?: Record<string, string> }): Promise<McpStack> {
  const anvil = await startAnvil({ chainId: 8453 })
  const uni = await deployUniswapFixture({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: anvilAccounts[1].privateKey, fundWallets: [MCP_WALLET] })
  const stack = new Stack({
    rpcUrls: { 8453: anvil.rpcUrl },
    policy: { maxTxPerHour: opts.maxTxPerHour, tokenLimits: { [uni.tokenB]: { maxAmount: opts.tusdCap.toString() } } },
    env: { SERVICE_V3_ROUTER_8453: uni.swapRouter02 },
  })
  await importKey(stack.dataDir, anvilAccounts[0].privateKey)
  await stack.start({ approver: true, ...(opts.approverEnv ? { approverEnv: opts.approverEnv } : {}) })
  const { mcp, log } = await connectMcp(opts.clientName, { url: stack.url, wallet: MCP_WALLET, env: { COUNTERSIGN_V3_ROUTER_8453: uni.swapRouter02 } })
  return {
    anvil,
    uni,
    stack,
    mcp,
    log,
    async stop() {
      await mcp.close()
      await stack.stop()
      await anvil.stop()
    },
  }
}

/**
 * countersign-mcp started over stdio as a host starts it (the command npm
 * linked), for chain 8453, against the gateway at `url`, and a client
 * connected to it; `env` adds settings. `log` is what it wrote to stderr so far.
 */
export async function connectMcp(clientName: string, o: { url: string; wallet: Address; env?: Record<string, string> }): Promise<{ mcp: Client; log: () => string }> {
  let log = ''
  const transport = new StdioClientTransport({
    command: path.join(repoRoot, 'node_modules/.bin/countersign-mcp'),
    env: { PATH: process.env.PATH ?? '', COUNTERSIGN_URL: o.url, COUNTERSIGN_WALLET: o.wallet, COUNTERSIGN_CHAIN_ID: '8453', ...o.env },
    stderr: 'pipe',
  })
  transport.stderr?.on('data', (d: Buffer) => (log += d.toString()))
  const mcp = new Client({ name: clientName, version: '1.0.0' })
  await mcp.connect(transport)
  return { mcp, log: () => log }
}

/** What a tool call answered: its first text block, and its structured result (a success's structuredContent, an error's JSON details block). */
export interface ToolAnswer {
  isError: boolean | undefined
  text: string
  structured: Record<string, any>
}

/** One tool call as a host makes it; `timeoutMs` is the host's wait (the SDK's 60 s unless given). */
export async function callTool(mcp: Client, name: string, args: Record<string, unknown>, timeoutMs?: number): Promise<ToolAnswer> {
  const result = (await mcp.callTool({ name, arguments: args }, undefined, timeoutMs === undefined ? undefined : { timeout: timeoutMs })) as CallToolResult
  const texts = result.content.map((c) => (c.type === 'text' ? c.text : ''))
  const structured = (result.isError ? JSON.parse(texts.at(-1)!) : result.structuredContent) as Record<string, any>
  return { isError: result.isError, text: texts[0]!, structured }
}
