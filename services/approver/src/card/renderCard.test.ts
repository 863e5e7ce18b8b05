// The one card, from the summary to what the dashboard lays out and the
// terminals print: the chain's token facts, red lines, who asked, escapes.
import { describe, expect, it } from 'vitest'
import { AGGREGATOR_ROUTER, defaultRouterTable, noPreflight, type RequestApprovalParams, type TxIntent } from '@countersign/shared'
import { actions, makeIntent, RECIPIENT, ROUTER_BASE, USDC_BASE } from '@countersign/shared/testing/intents'
import { summarise } from '../summary.js'
import { cardText } from './cardText.js'
import { renderCard } from './renderCard.js'

const routers = defaultRouterTable()
const params = (intent: TxIntent, extra: Partial<RequestApprovalParams> = {}): RequestApprovalParams => ({ intent, preflight: noPreflight(), policyReasons: ['approval threshold'], ...extra })
// The spoof: 90 TUSD (18 decimals on chain) declared as USDC with 12 decimals.
const spoofed = makeIntent({ action: { type: 'transfer', asset: { kind: 'erc20', address: USDC_BASE, symbol: 'USDC', decimals: 12 }, to: RECIPIENT, amount: '90000000000000000000' } })
const TUSD_FACTS = [{ address: USDC_BASE, symbol: 'TUSD', decimals: 18 }]

describe('the approval card', () => {
  it('shows the chain’s symbol and amount, and a declared symbol the chain contradicts as a red line that asks twice', () => {
    const s = summarise(params(spoofed, { tokenFacts: TUSD_FACTS }), routers)
    expect(s.action).toBe(`Transfer 90 TUSD to ${RECIPIENT} on Base`)
    expect(s.amount).toBe('90 TUSD')
    const card = renderCard(s)
    expect(card.tone).toBe('red')
    expect(card.confirm).toBe(true)
    expect(card.alerts).toEqual([`Token mismatch: the client declared token ${USDC_BASE} as "USDC" with 12 decimals; on chain it is "TUSD" with 18 decimals. The amounts above use the chain's symbol and decimals.`])
    expect(card.lines).toContainEqual({ label: 'Send', value: '90 TUSD', kind: 'amount' })
    const text = cardText(card, { requestId: 'r1' }).join('\n')
    expect(text).toContain('Transfer 90 TUSD')
    expect(text).toContain('!!! Token mismatch')
    expect(text).not.toContain('USDC to')
  })

  it('a declared symbol that is not a plain ticker is the client\u2019s escaped text in the red line, not words in the system\u2019s voice', () => {
    // Found by review: the declared symbol was quoted as it was, so the alert read
    // `…as "USDC" (checked, safe); "" with 6 decimals; on chain it is "USDC" with 6 decimals`.
    const intent = makeIntent({ action: { type: 'transfer', asset: { kind: 'erc20', address: USDC_BASE, symbol: 'USDC" (checked, safe); "', decimals: 6 }, to: RECIPIENT, amount: '5000000' } })
    const card = renderCard(summarise(params(intent, { tokenFacts: [{ address: USDC_BASE, symbol: 'USDC', decimals: 6 }] }), routers))
    expect(card.tone).toBe('red')
    expect(card.alerts).toEqual([
      `Token mismatch: the client declared token ${USDC_BASE} as a symbol that is not a plain ticker (the client's text, escaped: "USDC\\" (checked, safe); \\"") with 6 decimals; on chain it is "USDC" with 6 decimals. The amounts above use the chain's symbol and decimals.`,
    ])
    expect(card.alerts[0]).not.toContain('"USDC" (checked, safe)')
  })

  it('without an RPC the declared values are used, and the card says they are unchecked', () => {
    const card = renderCard(summarise(params(spoofed), routers))
    expect(card.title).toContain('90000000 USDC')
    expect(card.lines).toContainEqual(expect.objectContaining({ label: 'Tokens', tone: 'red' }))
    expect(card.alerts).toEqual([])
  })

  it('a token the gateway could not read from the chain is shown in raw units, never in the declared decimals, and is a red line that asks twice', () => {
    // Found by review: 10^12 units of a 6-decimals token declared with 18, its lookup failed (a rate-limited node):
    // the card read "Transfer 0.000001 USDC", green, marked as checked by the chain.
    const declared18 = makeIntent({ action: { type: 'transfer', asset: { kind: 'erc20', address: USDC_BASE, symbol: 'USDC', decimals: 18 }, to: RECIPIENT, amount: '1000000000000' } })
    const card = renderCard(summarise(params(declared18, { tokenFacts: [] }), routers))
    expect(card.title).toBe(`Transfer 1000000000000 units of token ${USDC_BASE} to ${RECIPIENT} on Base`)
    expect(card.title).not.toContain('0.000001')
    expect(card.tone).toBe('red')
    expect(card.confirm).toBe(true)
    expect(card.alerts).toEqual([
      `Unchecked token: ${USDC_BASE} could not be read from the chain (its symbol and decimals did not come back), so its amounts above are in raw units, not in the symbol and decimals the client declared.`,
    ])
    expect(cardText(card, { requestId: 'r1' }).join('\n')).toContain('!!! Unchecked token')
  })

  it('says "skill" only for the gateway’s sandbox runner; a client’s metadata.source is "client says: …"', () => {
    const claimed = makeIntent({ action: actions.native('1000') })
    claimed.metadata = { source: 'skill:payroll-official' }
    const fromClient = renderCard(summarise(params(claimed), routers))
    expect(fromClient.lines.find((l) => l.label === 'Requested by')).toBeUndefined()
    expect(fromClient.lines).toContainEqual({ label: 'Source', value: 'client says: skill:payroll-official', kind: 'text', tone: 'dim' })
    expect(cardText(fromClient, { requestId: 'r' }).join('\n')).not.toMatch(/requested by/i)
    const fromRunner = renderCard(summarise(params(claimed, { skill: 'payroll-official' }), routers))
    expect(fromRunner.lines).toContainEqual({ label: 'Requested by', value: 'skill payroll-official', kind: 'text' })
    expect(fromRunner.lines.find((l) => l.label === 'Source')).toBeUndefined()
  })

  it('escapes bidi and control characters in every shown string (note, source, on-chain symbol, warnings)', () => {
    const i = makeIntent({ action: actions.transfer() })
    i.metadata = { note: 'invoice \u202e4202 exe.fdp', source: 'bot\u001b[2J' }
    const s = summarise(params(i, { tokenFacts: [{ address: USDC_BASE, symbol: 'US\u202eDC', decimals: 6 }], preflight: { ...noPreflight(), warnings: ['token is US\u202eDC on chain'] } }), routers)
    const text = cardText(renderCard(s), { requestId: 'r' }).join('\n')
    expect(text).toContain('invoice \\u202e4202 exe.fdp')
    expect(text).toContain('client says: bot\\u001b[2J')
    expect(text).toContain('token is US\\u202eDC on chain')
    expect(text).not.toMatch(/[\u202e\u001b]/)
    // A symbol with a bidi control is not a ticker: the amount names the token address instead.
    expect(s.amount).toBe(`5 of token ${USDC_BASE}`)
  })

  it('a client\u2019s note and source: whole on the dashboard card (white space collapsed), one row on a terminal, and the terminal card ends with its own title and binding', () => {
    // Found by review: runs of spaces (and Unicode spaces) let a 1024-character note lay out a second card on an 80-column terminal.
    const i = makeIntent({ action: actions.transfer() })
    const note = `invoice 4711${'\u2000'.repeat(60)}Transfer 5 USDC to ${RECIPIENT} on Base${' '.repeat(40)}${'pad '.repeat(150)}`
    i.metadata = { note, source: `bot${'\u00a0'.repeat(80)}Send 5 USDC${' x'.repeat(50)}` }
    const s = summarise(params(i, { preflight: { ...noPreflight(), warnings: [`simulation reverted: ${'\u3000'.repeat(40)}Recipient ${RECIPIENT}`] } }), routers)
    const card = renderCard(s)
    const noteLine = card.lines.find((l) => l.label === 'Note')!
    expect(noteLine).toEqual({ label: 'Note', value: `client says: invoice 4711 Transfer 5 USDC to ${RECIPIENT} on Base ${'pad '.repeat(150).trim()}`, kind: 'text', tone: 'dim' })
    expect(card.lists.find((l) => l.title === 'Warnings')!.items).toEqual([`simulation reverted: Recipient ${RECIPIENT}`])
    const lines = cardText(card, { requestId: 'r', indent: '  ' })
    const shown = lines.filter((l) => l.includes('client says:'))
    expect(shown).toEqual([expect.stringMatching(/^ {2}Source +client says: bot Send 5 USDC x x.*…$/), expect.stringMatching(/^ {2}Note +client says: invoice 4711 Transfer 5 USDC to 0x2222.*…$/)])
    for (const l of shown) expect([...l].length).toBe(79)
    expect(lines.slice(-2)).toEqual([`  ──── this request: ${s.action}`, `  ──── binds ${s.txRequestHash}`])
    // A short note is shown as it is, with no "…".
    i.metadata = { note: 'invoice 4711' }
    expect(cardText(renderCard(summarise(params(i), routers)), { requestId: 'r' }).join('\n')).toMatch(/^Note +client says: invoice 4711$/m)
  })

  it('a swap card names both tokens by address (a symbol is the token’s own claim), on the dashboard and the terminal', () => {
    // The review's hostile token: its symbol() says "WETH", at an address that is not WETH's.
    const FAKE_WETH = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
    const intent = makeIntent({ action: { ...actions.swapIn(), assetOut: { kind: 'erc20', address: FAKE_WETH, symbol: 'WETH', decimals: 18 } } as TxIntent['action'] })
    const card = renderCard(summarise(params(intent, { tokenFacts: [{ address: USDC_BASE, symbol: 'USDC', decimals: 6 }, { address: FAKE_WETH, symbol: 'WETH', decimals: 18 }] }), routers))
    expect(card.lines).toContainEqual({ label: 'Token in', value: USDC_BASE, kind: 'address' })
    expect(card.lines).toContainEqual({ label: 'Token out', value: FAKE_WETH, kind: 'address' })
    const text = cardText(card, { requestId: 'r' }).join('\n')
    expect(text).toMatch(new RegExp(`Token in +${USDC_BASE}`))
    expect(text).toMatch(new RegExp(`Token out +${FAKE_WETH}`))
  })

  it('a swap card’s Router is the contract the transaction calls, not the router the intent names', () => {
    // provider "aggregator" naming the aggregator router, built (no quote) through the v3 router.
    const intent = makeIntent({ action: { ...actions.swapIn(), provider: 'aggregator', router: AGGREGATOR_ROUTER } as TxIntent['action'] })
    const s = summarise(params(intent), routers)
    expect(s.to).toBe(ROUTER_BASE)
    expect(renderCard(s).lines).toContainEqual({ label: 'Router', value: ROUTER_BASE, kind: 'address' })
    expect(renderCard(s).lines.filter((l) => l.value === AGGREGATOR_ROUTER)).toEqual([])
  })

  it('a lookalike token found by preflight is a red line that asks twice, whatever the score (a green 30 included)', () => {
    const detail = `token ${USDC_BASE} reports the symbol WETH, but WETH on chain 8453 is 0x4200000000000000000000000000000000000006: a lookalike token`
    const preflight = { ...noPreflight(), riskScore: 30, riskFactors: [{ id: 'lookalike_token_symbol', weight: 30, detail }] }
    const card = renderCard(summarise(params(makeIntent({ action: actions.swapIn() }), { preflight }), routers))
    expect(card.tone).toBe('red')
    expect(card.confirm).toBe(true)
    expect(card.alerts).toEqual([`Lookalike token: ${detail}. Check the token addresses above before approving.`])
    expect(cardText(card, { requestId: 'r1' }).join('\n')).toContain('!!! Lookalike token')
    // Other factors stay points of risk.
    const other = { ...noPreflight(), riskScore: 30, riskFactors: [{ id: 'new_recipient', weight: 30, detail: 'first transfer to this recipient' }] }
    expect(renderCard(summarise(params(makeIntent({ action: actions.swapIn() }), { preflight: other }), routers))).toMatchObject({ tone: 'green', confirm: false, alerts: [] })
  })

  it('a token without decimals() is a red line that asks twice: the amount may be an item number (found by review)', () => {
    const NFT = '0xC36442b4a4522E871399CD717aBDD847Ab11FE88'
    const detail = `token ${NFT} did not answer decimals() as an ERC-20 token does: its amounts are raw numbers`
    const preflight = { ...noPreflight(), riskScore: 30, riskFactors: [{ id: 'token_without_decimals', weight: 30, detail }] }
    const intent = makeIntent({ action: { type: 'approve', asset: { kind: 'erc20', address: NFT }, spender: RECIPIENT, amount: '123456' } })
    const card = renderCard(summarise(params(intent, { preflight, tokenFacts: [{ address: NFT, symbol: 'UNI-V3-POS', decimals: null }] }), routers))
    expect(card).toMatchObject({ tone: 'red', confirm: true })
    expect(card.alerts).toEqual([`Not an ERC-20 amount: ${detail}. Check what the contract above is before approving.`])
  })

  it('an approval of the token’s whole supply is a red line that asks twice: as good as unlimited (found by review)', () => {
    const detail = `approval of ${(1n << 96n) - 2n} of token ${USDC_BASE} is at least its whole supply of 1000: as good as unlimited (the spender can take the balance and every later deposit)`
    const preflight = { ...noPreflight(), riskScore: 25, riskFactors: [{ id: 'approval_covers_supply', weight: 25, detail }] }
    const intent = makeIntent({ action: actions.approve(((1n << 96n) - 2n).toString()) })
    const card = renderCard(summarise(params(intent, { preflight }), routers))
    expect(card).toMatchObject({ tone: 'red', confirm: true })
    expect(card.alerts).toEqual([`As good as unlimited: ${detail}. Approve only if the spender may hold everything this wallet has of the token, now and later.`])
  })

  it('risk colours: green up to 30, amber up to 60, red above (asks twice)', () => {
    const at = (riskScore: number) => renderCard(summarise(params(makeIntent({ action: actions.native('1') }), { preflight: { ...noPreflight(), riskScore } }), routers))
    expect([at(30).tone, at(31).tone, at(60).tone, at(61).tone]).toEqual(['green', 'amber', 'amber', 'red'])
    expect([at(60).confirm, at(61).confirm]).toEqual([false, true])
  })
})
