// What every tool handler gets: the client, the configuration, and helpers
// that resolve a call's wallet and chain against the configured defaults.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js'
import type { Address, ChainId, CountersignClient, IntentOptions } from '@countersign/client'
import type { McpConfig } from './config.js'
import type { RecentSends } from './recentSends.js'

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>

export interface ToolContext {
  client: CountersignClient
  config: McpConfig
  /** The intents of recent sending calls: an identical call is sent as the same intent. */
  recentSends: RecentSends
  /** Length of one approve-request attempt (the client's default unless a test shortens it). */
  approvalAttemptMs?: number
}

export type RegisterTool = (server: McpServer, ctx: ToolContext) => void

/** Shown to the operator as "client says: countersign-mcp". */
export const SOURCE = 'countersign-mcp'

export class MissingWalletError extends Error {
  constructor() {
    super('no wallet given: pass "wallet" or set COUNTERSIGN_WALLET in the MCP server\'s environment')
  }
}

export function walletOf(ctx: ToolContext, given: string | undefined): Address {
  const w = (given ?? ctx.config.wallet) as Address | undefined
  if (!w) throw new MissingWalletError()
  return w
}

export const chainOf = (ctx: ToolContext, given: ChainId | undefined): ChainId => given ?? ctx.config.chainId

/** Intent options for a call: its wallet and chain (or the defaults), the configured gas cap, the note. */
export function intentOptions(ctx: ToolContext, args: { wallet?: string | undefined; chainId?: ChainId | undefined; note?: string | undefined }): IntentOptions {
  return {
    wallet: walletOf(ctx, args.wallet),
    chainId: chainOf(ctx, args.chainId),
    source: SOURCE,
    ...(ctx.config.maxGasWei ? { maxGasWei: ctx.config.maxGasWei } : {}),
    ...(args.note ? { note: args.note } : {}),
  }
}
