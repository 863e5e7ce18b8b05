/**
 * Reading GET /v1/approvals/history's query, which the gateway and the
 * approver both serve. SPEC: this endpoint answers no errors, so every value
 * is read as far as it can be, never refused.
 */

export const HISTORY_DEFAULT_LIMIT = 20
export const HISTORY_MAX_LIMIT = 100

/** SPEC: limit defaults to 20 and is clamped into 1..100. */
export function clampHistoryLimit(raw: unknown): number {
  if (typeof raw !== 'string' || raw.trim() === '') return HISTORY_DEFAULT_LIMIT
  const n = Number(raw)
  if (!Number.isFinite(n)) return HISTORY_DEFAULT_LIMIT
  return Math.min(HISTORY_MAX_LIMIT, Math.max(1, Math.trunc(n)))
}

/**
 * The intent whose events alone are asked for, or undefined for all. Given
 * more than once (`?intentId=a&intentId=b`), the last one counts, as for a
 * form; an empty value asks for no filter.
 */
export function historyIntentId(raw: unknown): string | undefined {
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** What audit.list takes for a history query. */
export function historyListOptions(query: { limit?: unknown; intentId?: unknown }): { limit: number; intentId?: string } {
  const intentId = historyIntentId(query.intentId)
  return { limit: clampHistoryLimit(query.limit), ...(intentId !== undefined ? { intentId } : {}) }
}
