// Tool results: readable text for the model plus the same facts as
// structured content (the tool's outputSchema). Errors carry the service's
// code, message and reasons twice: in words, and as a JSON text block
// {error, status, message, reasons, body} (not as structuredContent, which a
// client checks against the success schema).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { ApprovalNotGrantedError, CountersignError, PolicyDeniedError, SentButUnconfirmedError } from '@countersign/client'

export function ok(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured }
}

/** A refusal the caller can act on (bad input before anything was sent). */
export function refused(message: string): CallToolResult {
  return errorResult(message, { error: 'invalid_input', message })
}

/** Any error of a tool call, as a tool error result (never a protocol error: the model must see it). */
export function failed(err: unknown): CallToolResult {
  if (!(err instanceof CountersignError)) {
    const message = err instanceof Error ? err.message : String(err)
    return errorResult(`countersign tool failed: ${message}`, { error: 'client_error', message })
  }
  const reasons = err instanceof PolicyDeniedError || err instanceof ApprovalNotGrantedError ? err.reasons : []
  const lines = [headline(err)]
  if (err.serviceMessage && !lines[0]!.includes(err.serviceMessage)) lines.push(`service says: ${err.serviceMessage}`)
  if (reasons.length) lines.push(err instanceof PolicyDeniedError ? 'reasons:' : 'approval was needed because:', ...reasons.map((r) => `- ${r}`))
  return errorResult(lines.join('\n'), { error: err.code, status: err.status, message: err.message, reasons, body: err.body })
}

function errorResult(text: string, details: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }, { type: 'text', text: JSON.stringify(details) }] }
}

function headline(err: CountersignError): string {
  if (err instanceof SentButUnconfirmedError) {
    return `SENT, NOT YET CONFIRMED: transaction ${err.sent.txHash} on chain ${err.chainId} was signed and broadcast, but its receipt could not be read. Do not send this payment again: check it with tx_status.`
  }
  if (err instanceof PolicyDeniedError) return `countersign policy denied this transaction (${err.code}, HTTP ${err.status}). Nothing was signed.`
  if (err instanceof ApprovalNotGrantedError) {
    const who = err.reason === 'user_declined' ? 'The operator declined this transaction' : err.reason === 'approval_expired' ? 'No operator decided in time; the approval request expired' : `The approval request ended: ${err.reason}`
    return `${who} (${err.code}, intent ${err.intentId ?? '?'}). Nothing was signed.`
  }
  return `countersign refused: ${err.message}`
}
