// Sends one intent through approval, signature and broadcast, telling the MCP
// host while an operator has to decide: progress notifications "waiting for
// operator approval (request …)" every few seconds, for as long as the
// approval request lives (300 s). A host that resets its timeout on progress
// waits as long as the operator needs.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { ShapeOutput, ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { PendingInfo, TxIntent } from '@countersign/client'
import type { ToolContext, ToolExtra } from './context.js'
import { sendOutput } from './outputs.js'
import { failed, ok } from './results.js'
import { untrustedLine, untrustedList } from './untrusted.js'
import { chainId, note, wallet } from './schemas.js'

/** The inputs every sending tool takes besides its own. */
const intentInputs = { wallet, chainId, note }

export type SendToolArgs<Shape extends ZodRawShapeCompat> = ShapeOutput<Shape & typeof intentInputs>

/** What a sending tool's handler returns: the intent and one line saying what was asked, or a refusal. */
export type PreparedSend = { intent: TxIntent; what: string } | { refusal: CallToolResult }

/**
 * Registers a tool that builds one intent from its arguments and sends it
 * (sendIntent): the shared inputs (wallet, chainId, note), output schema and
 * annotations, and turning any error into a tool error result.
 */
export function registerSendTool<Shape extends ZodRawShapeCompat>(
  server: McpServer,
  ctx: ToolContext,
  name: string,
  config: { title: string; description: string; inputSchema: Shape },
  prepare: (args: SendToolArgs<Shape>) => PreparedSend,
): void {
  const handler = async (args: SendToolArgs<Shape>, extra: ToolExtra): Promise<CallToolResult> => {
    try {
      const prepared = prepare(args)
      if ('refusal' in prepared) return prepared.refusal
      return await sendIntent(ctx, prepared.intent, prepared.what, extra)
    } catch (err) {
      return failed(err)
    }
  }
  server.registerTool(
    name,
    {
      ...config,
      inputSchema: { ...config.inputSchema, ...intentInputs },
      outputSchema: sendOutput,
      annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    // The SDK cannot infer the argument type through a generic shape; it is the same ShapeOutput.
    handler as never,
  )
}

export function pendingMessage(info: PendingInfo): string {
  const waited = Math.round(info.waitedMs / 1000)
  const ttl = info.ttlSeconds !== undefined ? `, expires in ${info.ttlSeconds} s` : ''
  return `waiting for operator approval (request ${info.requestId ?? 'not listed yet'}; ${waited} s so far${ttl})`
}

/** `what` is the request in one line, amounts in smallest units ("transfer 1500000 smallest units of token 0x… to 0x…"). */
export async function sendIntent(ctx: ToolContext, intent: TxIntent, what: string, extra: ToolExtra): Promise<CallToolResult> {
  const progressToken = extra._meta?.progressToken
  let progress = 0
  try {
    const { approval, sent, receipt } = await ctx.client.approveAndSend(intent, {
      signal: extra.signal,
      ...(ctx.approvalAttemptMs !== undefined ? { attemptMs: ctx.approvalAttemptMs } : {}),
      onPending: async (info) => {
        if (progressToken === undefined) return
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: ++progress, message: pendingMessage(info) } })
      },
    })
    const approvedBy = approval.approvalTokenId ? 'approved by an operator' : 'no approval needed (policy allowed it)'
    // The description and warnings name tokens by their on-chain symbols: quoted, so a symbol cannot add lines.
    const text = [
      `${receipt.status === 'success' ? 'Done' : 'Mined but REVERTED'}: ${what}.`,
      // The figures in words are the service's (decimals and symbol read from the chain), not the ones the model declared.
      untrustedLine("countersign's description, with the chain's decimals and symbols", approval.description),
      `approval: ${approvedBy}; risk score ${approval.riskScore}`,
      ...untrustedList('warnings', approval.warnings),
      `tx ${sent.txHash} on chain ${intent.chain.chainId}: ${receipt.status} in block ${receipt.blockNumber}, gas used ${receipt.gasUsed}`,
    ].join('\n')
    return ok(text, {
      intentId: intent.id,
      description: approval.description,
      txHash: sent.txHash,
      chainId: intent.chain.chainId,
      status: receipt.status,
      blockNumber: receipt.blockNumber,
      gasUsed: receipt.gasUsed,
      approval: { required: approval.approvalRequired ?? Boolean(approval.approvalTokenId), ...(approval.approvalTokenId ? { approvalTokenId: approval.approvalTokenId } : {}) },
      riskScore: approval.riskScore,
      warnings: approval.warnings,
    })
  } catch (err) {
    return failed(err)
  }
}
