// Tool results: readable text for the model plus the same facts as
// structured content (the tool's outputSchema). Errors carry the service's
// code, message and reasons twice: in words, and as a JSON text block
// {error, status, outcome, message, reasons, body} (not as structuredContent,
// which a client checks against the success schema).
//
// An error's first line says what happened to the transaction, because that
// decides what the model may do next: the service refused (nothing signed),
// countersign was not reached or did not answer (nothing signed; safe to try
// again), or the outcome is unknown (it may have been sent: a new call would
// be a new request and could pay twice).
//
// A read that fails (readFailed) is worded as a read: it says nothing about
// any transaction, so it never says "nothing was signed or sent" (found by
// review: a receipt lookup the node failed told the model, about a mined
// payment, that it was safe to try again).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import {
  ApprovalNotGrantedError,
  ApprovalWaitTimeoutError,
  BroadcastFailedError,
  CountersignError,
  PolicyDeniedError,
  RequestTimeoutError,
  ResponseTooLargeError,
  SendOutcomeUnknownError,
  SentButUnconfirmedError,
  ServiceUnreachableError,
  UnexpectedResponseError,
  isServiceAnswer,
} from '@countersign/client'
import { detailsJson, untrustedLine, untrustedList, word } from './untrusted.js'

export function ok(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured }
}

/** A refusal the caller can act on (bad input before anything was sent). */
export function refused(message: string): CallToolResult {
  return errorResult(message, { error: 'invalid_input', outcome: 'refused', message })
}

/**
 * What became of the request, for a program reading the details:
 * refused: the service said no; not_done: it was not reached, did not answer
 * or failed before signing (safe to try again); unknown: the transaction may
 * have been sent; sent: it was sent and its receipt is not known yet;
 * read_failed: a read tool could not read (nothing about any transaction).
 */
export type Outcome = 'refused' | 'not_done' | 'unknown' | 'sent' | 'read_failed'

/**
 * A read tool's failure. `what` names what could not be read ("the balance",
 * "the status of transaction 0x…"); `after` is the line on what this means for
 * the model's next step (never "nothing was sent": a read cannot know).
 */
export function readFailed(err: unknown, what: string, after: string): CallToolResult {
  if (!(err instanceof CountersignError)) {
    const message = err instanceof Error ? err.message : String(err)
    return errorResult(`countersign could not read ${what}: ${message}. ${after}`, { error: 'client_error', outcome: 'read_failed', message })
  }
  // An answer 4xx is about the request (a bad argument, a chain without RPC...), said as the service's refusal.
  const why = err.status > 0 ? `${word(err.code)}, HTTP ${err.status}` : err.message
  const lines = [`countersign could not read ${what} now (${why}). ${after}`]
  if (err.status > 0 && !clientWords(err) && err.serviceMessage) lines.push(untrustedLine(isServiceAnswer(err) ? 'service says' : 'the answer says', err.serviceMessage))
  return errorResult(lines.join('\n'), { error: err.code, status: err.status, outcome: 'read_failed', message: err.message, reasons: [], body: err.body })
}

/** What a failed read means for sending: nothing, either way. */
export const READ_SAYS_NOTHING_SENT = 'A failed read says nothing about whether anything was signed or sent; do not send a payment again because of it.'

/** Any error of a tool call, as a tool error result (never a protocol error: the model must see it). */
export function failed(err: unknown): CallToolResult {
  if (!(err instanceof CountersignError)) {
    const message = err instanceof Error ? err.message : String(err)
    return errorResult(`countersign tool failed: ${message}`, { error: 'client_error', outcome: 'not_done', message })
  }
  const reasons = err instanceof PolicyDeniedError || err instanceof ApprovalNotGrantedError ? err.reasons : []
  const lines = [headline(err)]
  // What an answer's body says (the service's message can carry a revert string; a proxy's page anything) is quoted
  // on its own line; the client's own errors (no answer, outcome unknown) are said in the headline.
  if (err.status > 0 && !clientWords(err) && err.serviceMessage) lines.push(untrustedLine(isServiceAnswer(err) ? 'service says' : 'the answer says', err.serviceMessage))
  lines.push(...untrustedList(err instanceof PolicyDeniedError ? 'reasons' : 'approval was needed because', reasons))
  return errorResult(lines.join('\n'), { error: err.code, status: err.status, outcome: outcomeOf(err), message: err.message, reasons, body: err.body })
}

/** Errors for an answer whose message the client wrote itself (what is wrong with the answer), not the answer's body. */
const clientWords = (err: CountersignError) => err instanceof UnexpectedResponseError || err instanceof ResponseTooLargeError

function errorResult(text: string, details: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }, { type: 'text', text: detailsJson(details) }] }
}

export function outcomeOf(err: CountersignError): Outcome {
  if (err instanceof SendOutcomeUnknownError) return 'unknown'
  if (err instanceof SentButUnconfirmedError || err instanceof BroadcastFailedError) return 'sent'
  return isServiceAnswer(err) && err.status >= 400 && err.status < 500 ? 'refused' : 'not_done'
}

function headline(err: CountersignError): string {
  if (err instanceof SendOutcomeUnknownError) return outcomeUnknown(err)
  if (err instanceof SentButUnconfirmedError) {
    return `SENT, NOT YET CONFIRMED: transaction ${err.sent.txHash} on chain ${err.chainId} was signed and broadcast, but its receipt could not be read. Do not send this payment again: check it with countersign_tx_status.`
  }
  if (err instanceof BroadcastFailedError) {
    return `SIGNED, BROADCAST FAILED: countersign signed transaction ${err.signResult.txHash} (intent ${err.signResult.intentId}) but the node did not take it. It is probably not on chain; check it with countersign_tx_status before sending this payment again.`
  }
  if (err instanceof PolicyDeniedError) return `countersign policy denied this transaction (${err.code}, HTTP ${err.status}). Nothing was signed.`
  if (err instanceof ApprovalNotGrantedError) {
    const who = err.reason === 'user_declined' ? 'The operator declined this transaction' : err.reason === 'approval_expired' ? 'No operator decided in time; the approval request expired' : `The approval request ended: ${word(err.reason)}`
    return `${who} (${word(err.code)}, intent ${word(err.intentId ?? '?')}). Nothing was signed.`
  }
  if (err instanceof ApprovalWaitTimeoutError) return `No approval decision came in time (intent ${err.intentId}). Nothing was signed.`
  if (err instanceof ServiceUnreachableError) return `countersign could not be reached (${err.message}). Nothing was signed or sent; it is safe to try again once the service is running.`
  if (err instanceof RequestTimeoutError) return `countersign did not answer in time (${err.message}). Nothing was signed or sent; it is safe to try again.`
  if (clientWords(err)) return `countersign's address gave an answer that is not countersign's (${err.message}). Nothing was signed or sent.`
  // From here on the error is an answer: its body's words go on their own quoted line, never into this one.
  const what = `${word(err.code)}, HTTP ${err.status}`
  if (isServiceAnswer(err) && err.status >= 400 && err.status < 500) return `countersign refused this request (${what}). Nothing was signed.`
  return `countersign could not carry out the request (${what}). Nothing was signed or sent; it is safe to try again later.`
}

function outcomeUnknown(err: SendOutcomeUnknownError): string {
  return [
    `OUTCOME UNKNOWN: this transaction MAY HAVE BEEN SENT. countersign gave no clear answer to signing and broadcasting intent ${err.intentId} on chain ${err.chainId}, even asked again with the same intent (${err.attempts} attempts).`,
    'Do NOT resend it as a new request (newTransaction: true, or any change to the arguments, makes a new intent and could pay a second time; the same call with the same arguments within 15 minutes is sent as this same intent).',
    `Check first: countersign_intent_status with intentId "${err.intentId}" shows its transaction once countersign has sent it; if it shows none after a few minutes, tell the user before trying again.`,
  ].join('\n')
}
