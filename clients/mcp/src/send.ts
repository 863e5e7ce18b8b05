// Sends one intent through approval, signature and broadcast, telling the MCP
// host while an operator has to decide: progress notifications "waiting for
// operator approval (request …)" every few seconds, for as long as the
// approval request lives (300 s). A host that resets its timeout on progress
// waits as long as the operator needs.
//
// A host that gives up on a call (its timeout, a cancel) never shows the
// model the call's result, even when the transaction went out; the model
// calls the tool again. An identical call within the first one's intent
// deadline is therefore sent as that same intent (recentSends.ts), which the
// gateway never signs twice.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { ShapeOutput, ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { ApprovalNotGrantedError, CountersignError, type ApprovalResult, type PendingInfo, type TxIntent } from '@countersign/client'
import type { ToolContext, ToolExtra } from './context.js'
import { sendOutput } from './outputs.js'
import type { Repeat } from './recentSends.js'
import { failed, ok, outcomeOf } from './results.js'
import { untrustedLine, untrustedList, word } from './untrusted.js'
import { chainId, newTransaction, note, wallet } from './schemas.js'

/** The inputs every sending tool takes besides its own. */
const intentInputs = { wallet, chainId, note, newTransaction }

export type SendToolArgs<Shape extends ZodRawShapeCompat> = ShapeOutput<Shape & typeof intentInputs>

/** What a sending tool's handler returns: the intent and one line saying what was asked, or a refusal. */
export type PreparedSend = { intent: TxIntent; what: string } | { refusal: CallToolResult }

/** How the send was approved, for the text the model reads. */
export function approvedBy(approval: Pick<ApprovalResult, 'approvalTokenId' | 'policyDecision'>): string {
  if (approval.approvalTokenId) return 'approved by an operator'
  // Policy wants an operator (or now denies it), yet approve-request answered: the intent was signed before, and this is that transaction.
  if (approval.policyDecision?.decision === 'require_approval') return 'none asked now (signed before: this is the transaction sent then)'
  if (approval.policyDecision?.decision === 'deny') return 'none asked now (signed before: this is the transaction sent then; policy would deny it now)'
  return 'no approval needed (policy allowed it)'
}

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
      const repeat = args.newTransaction ? undefined : ctx.recentSends.repeatOf(prepared.intent)
      if (!repeat) ctx.recentSends.remember(prepared.intent)
      return await sendIntent(ctx, repeat?.intent ?? prepared.intent, prepared.what, extra, repeat)
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
  // Both come from the service's pending list: a request id that is not a plain word is quoted, a ttl that is not a number left out.
  const ttl = Number.isFinite(info.ttlSeconds) ? `, expires in ${info.ttlSeconds} s` : ''
  return `waiting for operator approval (request ${info.requestId === undefined ? 'not listed yet' : word(info.requestId)}; ${waited} s so far${ttl})`
}

/** What a result says when the call was sent as an earlier identical call's intent. */
export function repeatNote(repeat: Repeat): string {
  return `This call is identical to one made ${Math.round(repeat.ageMs / 1000)} s ago, so it was sent as that call's intent ${repeat.intent.id}: whatever that call sent is this transaction, never a second one. To make another, separate transaction just like it on purpose, call again with newTransaction: true.`
}

/**
 * Whether a failed call leaves nothing for a repeat to find: a clear answer
 * that its intent was not signed and will not be. A repeat's own refusal (a
 * rate limit, say) says nothing of the first call's request, which may still
 * be in the gateway; a decline or expiry ends the intent's approval for all.
 */
const nothingToRepeat = (err: unknown, repeat: Repeat | undefined): boolean =>
  err instanceof ApprovalNotGrantedError || (repeat === undefined && err instanceof CountersignError && (outcomeOf(err) === 'refused' || outcomeOf(err) === 'not_done'))

/**
 * `what` is the request in one line, amounts in smallest units ("transfer 1500000 smallest units of token 0x… to 0x…").
 * `repeat`: this call is an earlier one's intent again; once that intent is signed, its approval is used
 * again and no operator is asked (sign-and-send answers the transaction already signed).
 */
export async function sendIntent(ctx: ToolContext, intent: TxIntent, what: string, extra: ToolExtra, repeat?: Repeat): Promise<CallToolResult> {
  const progressToken = extra._meta?.progressToken
  let progress = 0
  try {
    const signedBefore = repeat?.approval ? await ctx.client.findSent(intent.id, { signal: extra.signal }).catch(() => undefined) : undefined
    const { approval, sent, receipt } = await ctx.client.approveAndSend(intent, {
      signal: extra.signal,
      ...(signedBefore && repeat?.approval ? { approval: repeat.approval } : {}),
      onApproved: (a) => ctx.recentSends.approved(intent, a),
      ...(ctx.approvalAttemptMs !== undefined ? { attemptMs: ctx.approvalAttemptMs } : {}),
      onPending: async (info) => {
        if (progressToken === undefined) return
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: ++progress, message: pendingMessage(info) } })
      },
    })
    // The description and warnings name tokens by their on-chain symbols: quoted, so a symbol cannot add lines.
    const text = [
      `${receipt.status === 'success' ? 'Done' : 'Mined but REVERTED'}: ${what}.`,
      ...(repeat ? [repeatNote(repeat)] : []),
      // The figures in words are the service's (decimals and symbol read from the chain), not the ones the model declared.
      untrustedLine("countersign's description, with the chain's decimals and symbols", approval.description),
      `approval: ${approvedBy(approval)}; risk score ${approval.riskScore}`,
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
      ...(repeat ? { repeated: true } : {}),
    })
  } catch (err) {
    // A call the host gave up on may have sent anything: its intent stays for the repeat.
    if (!extra.signal.aborted && nothingToRepeat(err, repeat)) ctx.recentSends.forget(intent)
    return repeat ? withLine(failed(err), repeatNote(repeat)) : failed(err)
  }
}

/** The result with one more line in its words (the first text block). */
function withLine(result: CallToolResult, line: string): CallToolResult {
  const [first, ...rest] = result.content
  return first?.type === 'text' ? { ...result, content: [{ ...first, text: `${first.text}\n${line}` }, ...rest] } : result
}
