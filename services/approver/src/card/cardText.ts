import { clipToColumns, textColumns } from './columns.js'
import type { ApprovalCard, CardLine } from './renderCard.js'

/** A terminal's width when it does not say (output is not a TTY): the classic 80 columns. */
export const DEFAULT_COLUMNS = 80

/** Below this many columns a client's words are cut to this many anyway: a line this narrow wraps whatever is done. */
const MIN_CLIENT_COLUMNS = 16

/**
 * The card as terminal lines (the cli prompt and countersign-approve). Its
 * strings were escaped when the summary was made, so nothing here can move
 * the cursor, recolour the screen or reverse text.
 *
 * What a client wrote (a dim "client says: …" line) is kept to one row of
 * `columns`, cut with "…": found by review, a 1024-character note wrapped
 * into rows laid out as a second card. And the card ends with its own title
 * and binding, so the last thing above the question is what is being
 * approved, never a client's words. `name` says which request that is ("this
 * request", or the number countersign-approve shows).
 */
export function cardText(card: ApprovalCard, o: { requestId: string; ttlSeconds?: number; indent?: string; columns?: number; name?: string }): string[] {
  const pad = o.indent ?? ''
  const columns = o.columns ?? DEFAULT_COLUMNS
  const width = Math.max(...card.lines.map((l) => l.label.length))
  const left = o.ttlSeconds === undefined ? '' : ` · ${Math.floor(o.ttlSeconds / 60)}:${String(o.ttlSeconds % 60).padStart(2, '0')} left`
  const line = (l: CardLine) => {
    const start = `${pad}${l.label.padEnd(width)}  `
    return start + (l.tone === 'dim' ? clientWords(l.value, columns - textColumns(start)) : l.value)
  }
  const binds = card.lines.find((l) => l.kind === 'hash')
  return [
    `${card.title}`,
    `${pad}risk ${card.riskScore}/100 (${card.tone === 'green' ? 'low' : card.tone === 'amber' ? 'MEDIUM' : 'HIGH'})${left} · request ${o.requestId}`,
    ...card.alerts.map((a) => `${pad}!!! ${a}`),
    ...card.lines.map(line),
    ...card.lists.flatMap((list) => [`${pad}${list.title}:`, ...list.items.map((i) => `${pad}  ${list.tone === 'amber' ? '! ' : ''}${i}`)]),
    `${pad}──── ${o.name ?? 'this request'}: ${card.title}`,
    ...(binds ? [`${pad}──── ${binds.label.toLowerCase()} ${binds.value}`] : []),
  ]
}

/**
 * A client's words on one row: white space collapsed again (the card may come
 * from another approver's feed) and cut to what is left of the row, one column
 * spare so that a terminal that wraps at the last column does not.
 */
function clientWords(text: string, columnsLeft: number): string {
  return clipToColumns(text.replace(/[\p{Zs}\u2800]+/gu, ' ').trim(), Math.max(columnsLeft - 1, MIN_CLIENT_COLUMNS))
}
