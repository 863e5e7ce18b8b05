import { APPROVAL_PARAM_LIMITS as L, BALANCE_CHANGE_PATTERN, GAS_ESTIMATE_PATTERN, type RequestApprovalParams } from './approver.js'

const balanceChange = new RegExp(BALANCE_CHANGE_PATTERN)
const gasEstimate = new RegExp(GAS_ESTIMATE_PATTERN)

/** The text cut to `max` UTF-16 units, the cut marked with "…" (never splitting a surrogate pair). */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text
  let end = max - 1
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end -= 1
  return `${text.slice(0, end)}…`
}

/**
 * requestApproval's params within the bounds its schema sets
 * (APPROVAL_PARAM_LIMITS): long texts clipped and marked, lists cut to their
 * first items, a balance change or gas estimate no bound can hold dropped.
 * The findings come partly from the chain, so a client that points an intent
 * at a contract of its own choosing (a long revert reason, a symbol() of a
 * megabyte) would otherwise have its request refused by the approver as
 * invalid. What the operator is shown is still marked as clipped; the
 * approver derives the transaction and its hash from the intent itself.
 */
export function fitApprovalParams(params: RequestApprovalParams): RequestApprovalParams {
  const { preflight } = params
  const fitted: RequestApprovalParams = {
    ...params,
    preflight: {
      ...preflight,
      riskFactors: preflight.riskFactors.slice(0, L.items).map((f) => ({ id: clipText(f.id, L.riskFactorId), weight: f.weight, detail: clipText(f.detail, L.text) })),
      warnings: preflight.warnings.slice(0, L.items).map((w) => clipText(w, L.text)),
      balanceDiffs: preflight.balanceDiffs.filter((d) => balanceChange.test(d.change)).slice(0, L.items),
      gasEstimate: preflight.gasEstimate !== null && gasEstimate.test(preflight.gasEstimate) ? preflight.gasEstimate : null,
    },
    policyReasons: params.policyReasons.slice(0, L.policyReasons).map((r) => clipText(r, L.text)),
  }
  if (params.tokenFacts) {
    fitted.tokenFacts = params.tokenFacts.slice(0, L.tokenFacts).map((f) => ({
      address: f.address,
      symbol: f.symbol === null ? null : clipText(f.symbol, L.symbol),
      decimals: Number.isInteger(f.decimals) && f.decimals! >= 0 && f.decimals! <= 255 ? f.decimals : null,
    }))
  }
  return fitted
}
