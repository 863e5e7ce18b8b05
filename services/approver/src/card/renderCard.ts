// The one card renderer: what an operator reads before deciding, as a
// structured card that the dashboard (HTML) and the terminals (the cli
// prompt, countersign-approve) only lay out. Like Clef's UI API, the channel
// receives the request already interpreted; no view decides on its own what
// to show or how loud.
import type { ApprovalSummary } from '../summary.js'

export type Tone = 'green' | 'amber' | 'red'

export interface CardLine {
  label: string
  value: string
  /** `address` and `hash` are shown in full; `amount` stands out. */
  kind: 'address' | 'amount' | 'text' | 'hash'
  /** `dim`: a client's own words ("client says: …"), whole on the dashboard, cut to one row on terminals. */
  tone?: 'red' | 'dim'
}

export interface CardList {
  title: string
  items: string[]
  tone?: 'red' | 'amber'
}

export interface ApprovalCard {
  title: string
  riskScore: number
  tone: Tone
  /** Red lines: what must stop the operator before approving (a client's token claims the chain contradicts, a lookalike token). */
  alerts: string[]
  lines: CardLine[]
  lists: CardList[]
  /** Approving asks a second time: red risk, or any red line. */
  confirm: boolean
}

/** DESIGN: risk is green up to 30, amber up to 60, red above. */
export const toneOf = (score: number): Tone => (score <= 30 ? 'green' : score <= 60 ? 'amber' : 'red')

/**
 * Preflight findings that are red lines, not just points of risk: a token that
 * reports a well-known symbol (WETH, USDC, …) from another address is exactly
 * what an operator skimming "Buy at least 0.3 WETH" would miss, whatever the
 * score. The finding comes from the gateway's preflight, like the token facts
 * the mismatch alerts rest on.
 */
const ALERTING_FACTORS: ReadonlyMap<string, (detail: string) => string> = new Map([
  ['lookalike_token_symbol', (detail: string) => `Lookalike token: ${detail}. Check the token addresses above before approving.`],
  ['token_without_decimals', (detail: string) => `Not an ERC-20 amount: ${detail}. Check what the contract above is before approving.`],
  ['approval_covers_supply', (detail: string) => `As good as unlimited: ${detail}. Approve only if the spender may hold everything this wallet has of the token, now and later.`],
])

/** `quorum`: the votes so far ("1 of 2 approvals (alice); …") when the request needs several named operators. */
export function renderCard(s: ApprovalSummary, quorum: string | null = null): ApprovalCard {
  const alerts = [
    ...s.tokenMismatches.map((m) => `Token mismatch: ${m}. The amounts above use the chain's symbol and decimals.`),
    ...s.unreadTokens.map((a) => `Unchecked token: ${a} could not be read from the chain (its symbol and decimals did not come back), so its amounts above are in raw units, not in the symbol and decimals the client declared.`),
    ...s.riskFactors.flatMap((f) => {
      const alert = ALERTING_FACTORS.get(f.id)
      return alert ? [alert(f.detail)] : []
    }),
  ]
  const tone: Tone = alerts.length > 0 ? 'red' : toneOf(s.riskScore)
  const lines: CardLine[] = [
    { label: 'Chain', value: `${s.chain} (${s.chainId})`, kind: 'text' },
    { label: 'Wallet', value: s.wallet, kind: 'address' },
    ...s.fields.map((f): CardLine => ({ label: f.label, value: f.value, kind: f.kind })),
    { label: 'Calls', value: s.to, kind: 'address' },
    ...(s.tokenFacts === 'declared' ? [{ label: 'Tokens', value: 'symbols and decimals as declared by the client (no RPC for this chain to check them)', kind: 'text', tone: 'red' } satisfies CardLine] : []),
    ...(s.skill !== null ? [{ label: 'Requested by', value: `skill ${s.skill}`, kind: 'text' } satisfies CardLine] : []),
    ...(s.clientSource ? [{ label: 'Source', value: `client says: ${s.clientSource}`, kind: 'text', tone: 'dim' } satisfies CardLine] : []),
    ...(s.note ? [{ label: 'Note', value: `client says: ${s.note}`, kind: 'text', tone: 'dim' } satisfies CardLine] : []),
    { label: 'Binds', value: s.txRequestHash, kind: 'hash' },
    ...(quorum !== null ? [{ label: 'Quorum', value: quorum, kind: 'text' } satisfies CardLine] : []),
  ]
  const lists: CardList[] = [
    { title: `Risk factors (${s.preflightSource})`, items: s.riskFactors.map((f) => `+${f.weight} ${f.detail}`) },
    { title: 'Warnings', items: s.warnings, tone: 'amber' as const },
    { title: 'Balance changes (simulated)', items: s.balanceChanges },
    { title: 'Why approval is needed', items: s.policyReasons },
  ].filter((l) => l.items.length > 0)
  return { title: s.action, riskScore: s.riskScore, tone, alerts, lines, lists, confirm: tone === 'red' }
}
