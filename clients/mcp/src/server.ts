// The countersign MCP server: nine tools on one client.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { ToolContext } from './context.js'
import { registerApprove } from './tools/approve.js'
import { registerPreflight } from './tools/preflight.js'
import { registerReads } from './tools/reads.js'
import { registerSwap } from './tools/swap.js'
import { registerTransfers } from './tools/transfers.js'

export const SERVER_VERSION = '0.1.0'

export function createMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer(
    { name: 'countersign', version: SERVER_VERSION },
    {
      instructions:
        'countersign signs EVM transactions for you under policy and human approval; you never hold keys. Amounts are always strings of digits in the smallest unit (wei for ETH; 1.5 USDC with 6 decimals is "1500000"). Sending tools may wait minutes for a human operator; they report progress meanwhile. A policy denial or an operator decline comes back as a tool error with the reasons: report them to the user, do not retry with changes meant to get around them. A send whose result says OUTCOME UNKNOWN may have been sent: never send it again as a new request; check it with countersign_intent_status first. A sending call that timed out, was cancelled or got no result may have sent its transaction: calling the same tool again with the same arguments within 15 minutes is sent as the same intent and returns that transaction, never a second one. Only when the user wants a second, separate transaction just like one already made, pass newTransaction: true. A read tool that fails says nothing about whether anything was sent.',
    },
  )
  for (const register of [registerReads, registerTransfers, registerApprove, registerSwap, registerPreflight]) register(server, ctx)
  return server
}
