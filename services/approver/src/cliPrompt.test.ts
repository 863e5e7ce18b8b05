// The terminal prompt's text as a terminal lays it out, and the prompt on a
// real pseudo-terminal (./promptTerminal.testkit.ts).
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { defaultRouterTable, noPreflight } from '@countersign/shared'
import { makeIntent, USDC_BASE, WALLET } from '@countersign/shared/testing/intents'
import { columnsOf } from './card/columns.js'
import { formatPrompt } from './cliPrompt.js'
import { startPromptTerminal } from './promptTerminal.testkit.js'
import type { PendingRequest } from './requests/pendingRequests.js'
import { summarise } from './summary.js'

/** What a terminal `columns` wide shows of the text: a row full to the last column wraps to the next. */
function terminalRows(text: string, columns: number): string[] {
  return text.split('\n').flatMap((line) => {
    const rows = ['']
    let used = 0
    for (const c of line) {
      if (used + columnsOf(c) > columns) {
        rows.push('')
        used = 0
      }
      rows[rows.length - 1] += c
      used += columnsOf(c)
    }
    return rows.map((r) => r.trimEnd())
  })
}

describe('formatPrompt: a client\u2019s note cannot lay out a card above the question', () => {
  const ATTACKER = '0xbadbadbadbadbadbadbadbadbadbadbadbadbad0'
  const FRIEND = '0x2222222222222222222222222222222222222222'
  const request = (note: string): PendingRequest => {
    const intent = makeIntent({ action: { type: 'transfer', asset: { kind: 'erc20', address: USDC_BASE, symbol: 'USDC', decimals: 6 }, to: ATTACKER, amount: '1000000000000' } })
    intent.metadata = { note }
    const summary = summarise({ intent, preflight: noPreflight(), policyReasons: ['amount above the approval threshold'], tokenFacts: [{ address: USDC_BASE, symbol: 'USDC', decimals: 6 }] }, defaultRouterTable())
    return { requestId: 'a1e9c3b2-5d47-4f08-8b6a-2c9e7f1d3a55', summary, quorum: null } as unknown as PendingRequest
  }
  // The review's note: each fake card line padded to 80 columns, so that each wraps onto a row of its own.
  const fakeCard = [
    '',
    '━━━━ countersign: approval requested ━━━━',
    `Transfer 5 USDC to ${FRIEND} on Base`,
    '  risk 0/100 (low) · request 7d0c2f4e-1b8a-4c39-9e51-0a6f3d2b9c17',
    '  Chain      Base (8453)',
    `  Wallet     ${WALLET}`,
    '  Send       5 USDC',
    `  Token      ${USDC_BASE}`,
    `  Recipient  ${FRIEND}`,
    `  Calls      ${USDC_BASE}`,
  ]
  const spoofWith = (space: string) => {
    const row = (s: string) => s.replaceAll(' ', space).padEnd(80, space)
    return 'invoice 4711'.padEnd(80 - 26, space) + fakeCard.map(row).join('')
  }

  it.each([
    ['spaces', ' '],
    ['no-break spaces', '\u00a0'],
    ['en quads (U+2000)', '\u2000'],
    ['hair spaces (U+200A)', '\u200a'],
    ['braille blanks (U+2800)', '\u2800'],
  ])('a note padded with %s to 80 columns shows as one row; the last rows above the question are the real title and binding', (_, space) => {
    const note = spoofWith(space)
    expect(note.length).toBeLessThanOrEqual(1024)
    const r = request(note)
    const screen = terminalRows(formatPrompt(r, 80) + 'approve? [y/n] (120 s) ', 80)
    // Found by review: the note wrapped into "━━━━ countersign: approval requested ━━━━", "Transfer 5 USDC to 0x2222…" and the rest, one per row.
    expect(screen.filter((row) => row.startsWith('━━━━ countersign: approval requested'))).toHaveLength(1)
    expect(screen.filter((row) => /^\s*(Transfer 5 USDC|risk 0\/100 \(low\) · request 7d0c|Send\s+5 USDC|Recipient\s+0x2222)/.test(row))).toEqual([])
    // The note keeps to its one row, cut with "…", one column spare.
    const noteRows = screen.filter((row) => row.includes('client says:'))
    expect(noteRows).toEqual([expect.stringMatching(/^ {2}Note {7}client says: invoice 4711 ━━━━ countersign: .*…$/)])
    expect([...noteRows[0]!].length).toBeLessThan(80)
    expect(screen.indexOf(noteRows[0]!)).toBe(screen.findIndex((row) => row.startsWith('  Binds')) - 1)
    // On a 24-row terminal the real title is in view: the rows right above the question are the request's own title and binding.
    const closing = terminalRows([`  ──── this request: ${r.summary.action}`, `  ──── binds ${r.summary.txRequestHash}`, 'approve? [y/n] (120 s)'].join('\n'), 80)
    expect(screen.slice(-closing.length)).toEqual(closing)
    expect(r.summary.action).toBe(`Transfer 1000000 USDC to ${ATTACKER} on Base`)
  })

  it('ideographic text and spaces (two columns each) still fit one row of a narrower terminal', () => {
    const r = request('請求書\u3000\u3000\u3000'.repeat(60))
    const screen = terminalRows(formatPrompt(r, 60), 60)
    const row = screen.find((line) => line.includes('client says:'))!
    expect(row).toMatch(/^ {2}Note {7}client says: 請求書 請求書 .*…$/)
    expect([...row].reduce((n, c) => n + columnsOf(c), 0)).toBeLessThan(60)
  })
})
describe('formatPrompt: chain text cannot lay out card rows either', () => {
  const ATTACKER = '0xbadbadbadbadbadbadbadbadbadbadbadbadbad0'
  const FRIEND = '0x2222222222222222222222222222222222222222'
  // Found by review: list items (warnings, risk factors, reasons) were left to the terminal to wrap. A revert
  // reason (up to 300 characters, of a contract the agent chose) filled rows that read as the card's own.
  const fill = (text: string, n: number) => (text + '.'.repeat(n)).slice(0, n)
  // "    ! simulation reverted: " is 27 columns: the first 53 characters end its row.
  const reason =
    fill('Pausable: paused by guardian; retry after unpause.', 53) +
    fill(` Recipient ${FRIEND} (verified)`, 80) +
    fill(' risk 0/100 (low) · request 7d0c2f4e-1b8a-4c39-9e51-0a6f3d2b9c17', 80)
  const prompt = (warnings: string[], columns: number) => {
    const intent = makeIntent({ action: { type: 'transfer', asset: { kind: 'erc20', address: USDC_BASE, symbol: 'USDC', decimals: 6 }, to: ATTACKER, amount: '1000000000000' } })
    const summary = summarise({ intent, preflight: { ...noPreflight(), riskScore: 70, warnings }, policyReasons: ['amount above the approval threshold'], tokenFacts: [{ address: USDC_BASE, symbol: 'USDC', decimals: 6 }] }, defaultRouterTable())
    const r = { requestId: 'a1e9c3b2-5d47-4f08-8b6a-2c9e7f1d3a55', summary, quorum: null } as unknown as PendingRequest
    return terminalRows(formatPrompt(r, columns) + 'approve? [y/n] (120 s) ', columns)
  }

  it('a long warning wraps on the card\u2019s own marked rows, none of them a row of its own lines', () => {
    expect(reason.length).toBeLessThanOrEqual(300)
    const screen = prompt([`simulation reverted: ${reason}`], 80)
    expect(screen.filter((row) => /^\s*(risk 0\/100 \(low\) · request 7d0c|Recipient\s+0x2222)/.test(row))).toEqual([])
    const first = screen.findIndex((row) => row.includes('simulation reverted: Pausable'))
    const continued = screen.slice(first + 1, first + 4)
    expect(continued).toEqual([expect.stringMatching(/^ {6}│ /), expect.stringMatching(/^ {6}│ /), expect.stringMatching(/^ {6}│ /)])
    // Every row of it fits the terminal with a column spare, and all of the reason is there.
    for (const row of screen.slice(first, first + 4)) expect([...row].reduce((n, c) => n + columnsOf(c), 0)).toBeLessThan(80)
    expect(screen.slice(first, first + 4).map((row, i) => (i === 0 ? row.replace(/^.*simulation reverted: /, '') : row.replace(/^ {6}│ /, ''))).join('')).toBe(reason.trimEnd())
  })

  it('an item longer than six rows is cut with "…"', () => {
    const screen = prompt([`detail ${'x'.repeat(2000)}`], 60)
    const first = screen.findIndex((row) => row.includes('detail xxx'))
    expect(screen.slice(first + 1, first + 6).every((row) => row.startsWith('      │ x'))).toBe(true)
    expect(screen[first + 5]).toMatch(/x…$/)
    expect(screen[first + 6]).not.toMatch(/x/)
  })
})

describe('createTerminalPrompt on /dev/tty', () => {
  it('keeps one terminal open across prompts: 40 unanswered prompts do not leave 40 sets of descriptors', async () => {
    const terminal = startPromptTerminal(`
const fds = () => readdirSync('/proc/self/fd').length
const ask = createTerminalPrompt(5)
const counts = []
const outcomes = new Set()
for (let i = 0; i < 40; i++) {
  await ask(request('r'), new AbortController().signal).catch((e) => outcomes.add(e.message))
  counts.push(fds())
}
record('descriptors', { first: counts[0], last: counts.at(-1), outcomes: [...outcomes] })
`)
    try {
      await terminal.until(() => terminal.exited(), 30_000)
    } finally {
      terminal.close()
    }
    const { first, last, outcomes } = terminal.resultOf('descriptors') as { first: number; last: number; outcomes: string[] }
    // Every prompt was shown on the terminal and timed out unanswered.
    expect(outcomes).toEqual(['no answer in time; the request stays pending on the dashboard'])
    expect(last - first).toBeLessThanOrEqual(2)
  })

  it('never answers a prompt with what was typed while no prompt was showing (a typed-ahead y approved the next request unseen)', async () => {
    const terminal = startPromptTerminal(`
const ask = createTerminalPrompt(3000)
// A: nobody answers; it times out.
record('A', await outcome(ask(request('A'), new AbortController().signal)))
// The test types "y<Enter>" now, while nothing is asked.
await signalled('typed-before-b')
record('B', await outcome(ask(request('B'), new AbortController().signal)))
// C: decided elsewhere (the dashboard) once its question is asked.
const elsewhere = new AbortController()
const c = outcome(ask(request('C'), elsewhere.signal))
await sleep(SETTLE_MS + 200)
elsewhere.abort()
record('C', await c)
// The test types "y" without Enter now, while nothing is asked; Enter comes once D is shown.
await signalled('typed-before-d')
record('D', await outcome(ask(request('D'), new AbortController().signal)))
`)
    const { until, resultOf } = terminal
    const prompts = () => terminal.screen().split('approve? [y/n]').length - 1
    // What is typed reaches the terminal (its echo is on the screen) before the next prompt is shown.
    const type = async (keys: string, echo: string) => {
      const before = terminal.screen().length
      terminal.type(keys)
      await until(() => terminal.screen().slice(before).includes(echo))
    }
    try {
      await until(() => resultOf('A') !== undefined)
      await type('y\r', 'y')
      terminal.signal('typed-before-b')
      await until(() => prompts() >= 2)
      // The typed-ahead line did not answer B: half a second after B is shown it still waits...
      await sleep(500)
      const bBeforeAnswer = resultOf('B')
      // ...and a fresh answer decides it.
      await type('y\r', 'y')
      await until(() => resultOf('B') !== undefined)
      await until(() => resultOf('C') !== undefined)
      await type('y', 'y')
      terminal.signal('typed-before-d')
      await until(() => prompts() >= 4)
      await sleep(200)
      // Enter completes the line begun before D was shown: an empty answer now, not a yes.
      terminal.type('\r')
      await sleep(300)
      terminal.type('n\r')
      await until(() => resultOf('D') !== undefined)
      expect({ bBeforeAnswer, outcomes: terminal.recorded(), ignoredNotices: terminal.screen().split('input ignored: the request changed; read it and answer again').length - 1 }).toEqual({
        bBeforeAnswer: undefined,
        // B and D say that something typed before them was thrown away.
        ignoredNotices: 2,
        outcomes: [
          { name: 'A', result: 'no answer in time; the request stays pending on the dashboard' },
          { name: 'B', result: 'approved' },
          { name: 'C', result: '(decided elsewhere or expired)' },
          { name: 'D', result: 'denied' },
        ],
      })
    } finally {
      terminal.close()
    }
  })

  it('a y typed as the next request appears does not answer it: input until the card has been shown for the settle time is ignored, and the prompt says so (found by review)', async () => {
    const NOTICE = 'input ignored: the request changed; read it and answer again'
    const terminal = startPromptTerminal(`
const ask = createTerminalPrompt(10_000)
// A: the attacker's own request, shown until it ends (its expiry, predictable from its life); B follows at once.
const a = new AbortController()
const answeredA = outcome(ask(request('A'), a.signal))
const answeredB = outcome(ask(request('B'), new AbortController().signal))
await signalled('end-a')
a.abort()
record('A', await answeredA)
record('B', await answeredB)
// C: the operator starts typing "y" as its card appears, and presses Enter only once its question is there.
record('C', await outcome(ask(request('C'), new AbortController().signal)))
`)
    const { until, resultOf } = terminal
    const screen = () => terminal.screen()
    try {
      await until(() => screen().includes('request A'))
      terminal.signal('end-a')
      // B's card appears: the operator's "y<Enter>", meant for A, lands as soon as it does.
      await until(() => screen().includes('request B'))
      terminal.type('y\r')
      const typedAt = Date.now()
      await until(() => screen().includes(NOTICE) || resultOf('B') !== undefined)
      const ignoredAfterMs = Date.now() - typedAt
      await sleep(300)
      const bAfterTypeAhead = resultOf('B')
      // The question comes under the notice; an answer typed now counts.
      const afterNotice = screen().split(NOTICE)[1] ?? ''
      if (bAfterTypeAhead === undefined) terminal.type('n\r')
      await until(() => resultOf('B') !== undefined)
      await until(() => screen().includes('request C'))
      terminal.type('y')
      await until(() => screen().split(NOTICE).length === 3 || resultOf('C') !== undefined)
      terminal.type('\r')
      await sleep(300)
      const cAfterEnter = resultOf('C')
      if (cAfterEnter === undefined) terminal.type('n\r')
      await until(() => resultOf('C') !== undefined)
      expect({ bAfterTypeAhead, cAfterEnter, askedAfterNotice: afterNotice.includes('approve? [y/n]'), outcomes: terminal.recorded() }).toEqual({
        bAfterTypeAhead: undefined,
        // The "y" typed before C's question was thrown away: Enter alone is no answer.
        cAfterEnter: undefined,
        askedAfterNotice: true,
        outcomes: [
          { name: 'A', result: '(decided elsewhere or expired)' },
          { name: 'B', result: 'denied' },
          { name: 'C', result: 'denied' },
        ],
      })
      expect(ignoredAfterMs).toBeLessThan(5_000)
    } finally {
      terminal.close()
    }
  })

  it('prints "approved" only once the decision is carried out, and what went wrong when it could not be (found by review: "approved" was printed first)', async () => {
    const terminal = startPromptTerminal(`
const ask = createTerminalPrompt(10_000)
// A: carried out only when the test says so.
record('A', await outcome(ask(request('A'), new AbortController().signal, () => signalled('carried'))))
// B: the signer is down.
record('B', await outcome(ask(request('B'), new AbortController().signal, async () => { throw new Error('the signer could not issue a token (\\u001b]0;x: ENOENT); the request is still pending') })))
`)
    const { until, resultOf } = terminal
    const screen = () => terminal.screen()
    try {
      await until(() => screen().includes('approve? [y/n]'))
      terminal.type('y\r')
      await sleep(500)
      const beforeCarriedOut = { printed: /approved\r?\n/.test(screen()), result: resultOf('A') }
      terminal.signal('carried')
      await until(() => resultOf('A') !== undefined)
      await until(() => screen().split('approve? [y/n]').length === 3)
      const afterA = screen().length
      terminal.type('y\r')
      await until(() => resultOf('B') !== undefined)
      // What the prompt wrote reaches the screen through the pty after the outcome is recorded: wait for the whole line.
      await until(() => /ENOENT\); the request is still pending\r?\n/.test(screen().slice(afterA)))
      const tail = screen().slice(afterA)
      // The error's text reaches the terminal escaped: no control sequence (a title change here) from a message.
      const shown = { said: tail.includes('approval not carried out: the signer could not issue a token (\\u001b]0;x: ENOENT)'), raw: tail.includes('\u001b]0;x') }
      expect({ beforeCarriedOut, shown, approvedForB: /approved\r?\n/.test(tail), outcomes: terminal.recorded() }).toEqual({
        beforeCarriedOut: { printed: false, result: undefined },
        shown: { said: true, raw: false },
        approvedForB: false,
        outcomes: [
          { name: 'A', result: 'approved' },
          { name: 'B', result: 'not carried out: the signer could not issue a token (\u001b]0;x: ENOENT); the request is still pending' },
        ],
      })
    } finally {
      terminal.close()
    }
  })
})
