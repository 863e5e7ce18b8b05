import { clipToColumns, columnsOf, textColumns } from './columns.js'
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
    ...card.alerts.flatMap((a) => ownRows(`${pad}!!! `, a, pad, columns)),
    ...card.lines.map(line),
    ...card.lists.flatMap((list) => [`${pad}${list.title}:`, ...list.items.flatMap((i) => ownRows(`${pad}  ${list.tone === 'amber' ? '! ' : ''}`, i, pad, columns))]),
    `${pad}──── ${o.name ?? 'this request'}: ${card.title}`,
    ...(binds ? [`${pad}──── ${binds.label.toLowerCase()} ${binds.value}`] : []),
  ]
}

/** Rows an alert or list item may take before it is cut with "…". */
const MAX_ITEM_ROWS = 6

/**
 * An alert or a list item (a warning, a risk factor, a policy reason, a
 * balance change) wrapped by the card itself: each row but the first starts
 * with a "│" mark, and the item is cut after MAX_ITEM_ROWS. Left to the
 * terminal, a long one (a revert reason is 300 characters of a contract's
 * choosing) wrapped at the left edge, into rows laid out as the card's own
 * Recipient or risk line (found by review).
 */
function ownRows(head: string, text: string, pad: string, columns: number): string[] {
  const rows: string[] = []
  const continued = `${pad}    │ `
  let row = head
  let room = Math.max(columns - 1 - textColumns(head), MIN_CLIENT_COLUMNS)
  for (const c of text) {
    const w = columnsOf(c)
    if (w > room) {
      if (rows.length === MAX_ITEM_ROWS - 1) return [...rows, clipToColumns(row + c, textColumns(row))]
      rows.push(row)
      row = continued
      room = Math.max(columns - 1 - textColumns(continued), MIN_CLIENT_COLUMNS)
    }
    row += c
    room -= w
  }
  return [...rows, row]
}

/**
 * A client's words on one row: white space collapsed again (the card may come
 * from another approver's feed) and cut to what is left of the row, one column
 * spare so that a terminal that wraps at the last column does not.
 */
function clientWords(text: string, columnsLeft: number): string {
  return clipToColumns(text.replace(/[\p{Zs}\u2800]+/gu, ' ').trim(), Math.max(columnsLeft - 1, MIN_CLIENT_COLUMNS))
}
