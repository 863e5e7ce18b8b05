// The dashboard in a real Chromium: a card that ends must not move another
// request's Approve button under the operator's pointer (security review: an
// agent times its own request A to end just before the operator clicks B's
// Approve, so that C's slides into place). In-process approver with a clock
// the test moves, so A expires exactly when the test says.
import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { defaultRouterTable, noPreflight, openAuditLog } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { createApprovalService } from '../services/approver/src/approvalService.js'
import { webChannel } from '../services/approver/src/channels/webChannel.js'
import { buildApproverApp } from '../services/approver/src/http/app.js'
import { PendingRequests } from '../services/approver/src/requests/pendingRequests.js'

const TOKEN = 'operator-secret-operator-secret-5678'
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

let browser: Browser
const closers: Array<() => Promise<unknown>> = []
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS })
})
afterAll(async () => {
  await browser?.close()
})
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * The agent's A (ends first), the operator's B (1 ETH) and the agent's C (9 ETH),
 * oldest first on a dashboard whose pointer rests on B's Approve.
 */
async function threeCards() {
  let now = Date.now()
  const audit = openAuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-shift-')), 'audit.db'))
  const pending = new PendingRequests(() => now, { ttlMs: 300_000, perWallet: 5, total: 500 })
  const granted: string[] = []
  const service = createApprovalService({
    mode: 'web', pending, audit, routers: defaultRouterTable(), clock: () => now,
    granter: { grant: async (b) => { granted.push(b.intentId); return { approvalTokenId: randomUUID(), expiresAt: now + 300_000 } }, durable: async () => undefined },
  })
  const web = webChannel(() => now)
  service.addChannel(web)
  const app = await buildApproverApp({ host: '127.0.0.1', service, web, audit, clock: () => now, operatorToken: TOKEN })
  await app.listen({ host: '127.0.0.1', port: 0 })
  closers.push(() => audit.close(), () => app.close())
  /** The intent id (what the granter sees) and the request id (the dashboard's data-request-id). */
  const ask = async (wei: string) => {
    const intent = makeIntent({ action: actions.native(wei) })
    const ticket = await service.requestApproval({ intent, preflight: noPreflight(), policyReasons: ['x'] })
    if (ticket.state !== 'pending') throw new Error(`expected a pending request, got ${ticket.state}`)
    return { intent: intent.id, request: ticket.requestId }
  }
  const a = await ask('1000000000000000')
  now += 10_000
  const b = await ask('1000000000000000000')
  const c = await ask('9000000000000000000')

  const page = await browser.newPage({ viewport: { width: 1200, height: 1400 } })
  closers.push(() => page.close())
  await page.addInitScript((t) => sessionStorage.setItem('countersign.operatorToken', t), TOKEN)
  await page.goto(`http://127.0.0.1:${(app.server.address() as { port: number }).port}/approval-ui`)
  await page.waitForSelector('#conn.live')
  const cardB = page.locator('[data-request-id]').filter({ hasText: 'Transfer 1 ETH (native)' })
  // Enabled: the cards have stood still long enough for a click to count.
  await cardB.getByRole('button', { name: 'Approve' }).and(page.locator(':enabled')).waitFor()
  const box = (await cardB.getByRole('button', { name: 'Approve' }).boundingBox())!
  const spot = { x: box.x + box.width / 2, y: box.y + box.height / 2 }
  await page.mouse.move(spot.x, spot.y) // the operator's pointer on B's Approve
  /** A reaches its 300 s and is swept (the agent knows when). */
  const expireA = async () => {
    now += 290_001
    await service.sweep()
  }
  const click = async () => {
    await page.mouse.down()
    await page.mouse.up()
  }
  /** Which request's card is under the operator's pointer, and whether the button there takes clicks. */
  const under = () =>
    page.evaluate(({ x, y }) => {
      const button = document.elementFromPoint(x, y)?.closest('button')
      return { request: button?.closest('[data-request-id]')?.getAttribute('data-request-id') ?? null, button: button?.textContent ?? null, disabled: button?.disabled ?? null }
    }, spot)
  return { page, a, b, c, granted, expireA, click, under, pending }
}

/** A's card is gone from the list or shown as ended: the moment the reviewer's click lands. */
const aEnded = (page: Page) =>
  page.waitForFunction(() => {
    const a = [...document.querySelectorAll('[data-request-id]')].find((n) => n.textContent!.includes('Transfer 0.001 ETH'))
    return !a || a.classList.contains('ended')
  })

it('the pointer on B\'s Approve, A ends, a click at the same spot: B is approved, never C; A stays in place greyed, saying it expired', async () => {
  const { page, b, c, granted, expireA, click, under } = await threeCards()
  expect(await under()).toEqual({ request: b.request, button: 'Approve', disabled: false })
  await expireA()
  await aEnded(page)
  await click()
  for (let i = 0; i < 100 && granted.length === 0; i++) await sleep(20)
  // Before the fix, A's card was removed at once, C's Approve moved to this spot, and C was granted.
  expect(granted, `b=${b.intent} c=${c.intent}`).toEqual([b.intent])

  const cardA = page.locator('[data-request-id]').filter({ hasText: 'Transfer 0.001 ETH' })
  expect(await cardA.getAttribute('class')).toContain('ended')
  expect(await cardA.locator('.ended-label').textContent()).toBe('expired')
  expect(await cardA.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true)
  // B, just approved, also stays where it was: a second click (a double click) lands on its disabled button, not on C.
  const cardB = page.locator('[data-request-id]').filter({ hasText: 'Transfer 1 ETH (native)' })
  await cardB.locator('.ended-label').filter({ hasText: /^approved$/ }).waitFor()
  await click()
  await sleep(300)
  expect(granted).toEqual([b.intent])
})

it('when the ended cards are removed and C slides under the pointer, a click at once decides nothing; the settled list works as before', async () => {
  const { page, b, c, granted, expireA, click, under, pending } = await threeCards()
  await expireA()
  await aEnded(page)
  // The reviewer's wait: B is now the first card (A's placeholder removed), C's Approve where B's was.
  await page.locator('[data-request-id]').first().filter({ hasText: 'Transfer 1 ETH (native)' }).waitFor({ timeout: 15_000 })
  const clicked = await under()
  await click()
  await sleep(300)
  // Before the fix, C was granted here.
  expect(granted, `b=${b.intent} c=${c.intent}`).toEqual([])
  expect(clicked).toEqual({ request: c.request, button: 'Approve', disabled: true })
  expect(pending.list().map((p) => p.intent.id)).toEqual([b.intent, c.intent])

  // Once the list has stood still, the operator's deliberate click on B (where it now is) approves it.
  const approveB = page.locator('[data-request-id]').filter({ hasText: 'Transfer 1 ETH (native)' }).getByRole('button', { name: 'Approve' })
  await approveB.click()
  for (let i = 0; i < 100 && granted.length === 0; i++) await sleep(20)
  expect(granted).toEqual([b.intent])
})


it('a click that arrives after a move but before the next frame disabled the button is refused by the click itself, and says so', async () => {
  const { page, b, granted, pending } = await threeCards()
  // Something above the list grows and the click comes in the same task: no frame has run in between.
  const result = await page.evaluate(() => {
    const spacer = document.createElement('div')
    spacer.style.height = '40px'
    document.getElementById('pending')!.prepend(spacer)
    const cardB = [...document.querySelectorAll('[data-request-id]')].find((n) => n.textContent!.includes('Transfer 1 ETH (native)'))!
    const approve = cardB.querySelector<HTMLButtonElement>('button.approve')!
    const enabled = !approve.disabled
    approve.click()
    return { enabled, notice: document.getElementById('notice')!.textContent }
  })
  expect(result).toEqual({ enabled: true, notice: 'The list just changed under the pointer; nothing was decided. Check the card and click again.' })
  await sleep(300)
  expect(granted).toEqual([])
  expect(pending.list().map((p) => p.requestId)).toContain(b.request)
})
