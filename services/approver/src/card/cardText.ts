import type { ApprovalCard } from './renderCard.js'

/**
 * The card as terminal lines (the cli prompt and countersign-approve). Its
 * strings were escaped when the summary was made, so nothing here can move
 * the cursor, recolour the screen or reverse text.
 */
export function cardText(card: ApprovalCard, o: { requestId: string; ttlSeconds?: number; indent?: string } ): string[] {
  const pad = o.indent ?? ''
  const width = Math.max(...card.lines.map((l) => l.label.length))
  const left = o.ttlSeconds === undefined ? '' : ` · ${Math.floor(o.ttlSeconds / 60)}:${String(o.ttlSeconds % 60).padStart(2, '0')} left`
  return [
    `${card.title}`,
    `${pad}risk ${card.riskScore}/100 (${card.tone === 'green' ? 'low' : card.tone === 'amber' ? 'MEDIUM' : 'HIGH'})${left} · request ${o.requestId}`,
    ...card.alerts.map((a) => `${pad}!!! ${a}`),
    ...card.lines.map((l) => `${pad}${l.label.padEnd(width)}  ${l.value}`),
    ...card.lists.flatMap((list) => [`${pad}${list.title}:`, ...list.items.map((i) => `${pad}  ${list.tone === 'amber' ? '! ' : ''}${i}`)]),
  ]
}
