// The dashboard in a real Chromium (Debian package, driven by playwright-core):
// a pending request appears without a reload, Approve and Deny are clicks.
import { mkdirSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { parseEther, type Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { intentFor, nativeIntent } from './support/intents.js'
import { deployTestToken } from './support/contracts.js'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { repoRoot } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'

const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const artifacts = path.join(repoRoot, 'test/artifacts')

let anvil: Anvil
let stack: Stack
let browser: Browser

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
  await importKey(stack.dataDir, anvilAccounts[3].privateKey)
  await stack.start({ approver: true })
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS })
})

afterAll(async () => {
  await browser?.close()
  await stack?.stop()
  await anvil?.stop()
})

describe('approval dashboard in Chromium', () => {
  it('shows a pending request live, approves and denies by click', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const token = stack.operatorToken
    await page.addInitScript((t) => sessionStorage.setItem('countersign.operatorToken', t), token)
    await page.goto(`${stack.url}/approval-ui`)
    await page.waitForSelector('#conn.live')

    const wallet = { address: anvilAccounts[3].address as Address }
    const first = nativeIntent(parseEther('1.5').toString(), { wallet, metadata: { source: 'dca-skill', note: 'weekly top-up' } })
    const blocked = stack.post('/v1/tx/approve-request', first)
    const card = page.locator(`[data-request-id]`).filter({ hasText: 'Transfer 1.5 ETH (native)' })
    await card.waitFor({ timeout: 10_000 })
    const text = await card.textContent()
    // A client's own metadata.source is its claim, not a skill the gateway ran.
    expect(text, text ?? '').toContain('client says: dca-skill')
    expect(text).not.toContain('Requested by')
    expect(await card.locator('.risk').textContent()).toBe('risk 0')
    expect(await card.getAttribute('class')).toContain('green')
    mkdirSync(artifacts, { recursive: true })
    await page.screenshot({ path: path.join(artifacts, 'dashboard-pending.png'), fullPage: true })

    await card.getByRole('button', { name: 'Approve' }).click()
    const approved = await blocked
    expect(approved.status).toBe(200)
    expect(approved.body.approvalTokenId).toMatch(/^[0-9a-f-]{36}$/)
    await card.waitFor({ state: 'detached' })
    await page.locator('#history .ev-approval_granted').first().waitFor()

    const second = nativeIntent(parseEther('2').toString(), { wallet })
    const blocked2 = stack.post('/v1/tx/approve-request', second)
    const card2 = page.locator(`[data-request-id]`).filter({ hasText: 'Transfer 2 ETH (native)' })
    await card2.waitFor({ timeout: 10_000 })
    await card2.getByRole('button', { name: 'Deny' }).click()
    const denied = await blocked2
    expect(denied.status).toBe(403)
    expect(denied.body.reason).toBe('user_declined')
    await page.close()
  })

  it('asks for the operator token when it has none; a wrong one is refused by the live feed and asked again', async () => {
    const page = await browser.newPage()
    await page.goto(`${stack.url}/approval-ui`)
    await page.locator('#tokenDialog.open').waitFor()
    expect(await page.locator('#conn').getAttribute('class')).not.toBe('live')
    await page.fill('#tokenInput', 'wrong-token')
    await page.click('#tokenForm button[type=submit]')
    await page.locator('#error').filter({ hasText: 'refused' }).waitFor()
    await page.locator('#tokenDialog.open').waitFor()
    expect(await page.evaluate(() => sessionStorage.getItem('countersign.operatorToken'))).toBeNull()
    await page.fill('#tokenInput', stack.operatorToken)
    await page.click('#tokenForm button[type=submit]')
    await page.waitForSelector('#conn.live')
    const wallet = { address: anvilAccounts[3].address as Address }
    const intent = nativeIntent(parseEther('0.25').toString(), { wallet })
    const blocked = stack.post('/v1/tx/approve-request', intent)
    const card = page.locator(`[data-request-id]`).filter({ hasText: 'Transfer 0.25 ETH' })
    await card.waitFor({ timeout: 10_000 })
    await card.getByRole('button', { name: 'Deny' }).click()
    expect((await blocked).status).toBe(403)
    await page.close()
  })

  it('a page on another origin cannot read the feed, not even with the token; the dashboard still works', async () => {
    // The attacker's page, served from another origin (another port), tries the feed through the gateway and on the approver's own port.
    const targets = [`ws://127.0.0.1:${stack.port}/v1/approvals/ws`, `ws://127.0.0.1:${stack.approverPort}/v1/approvals/ws`]
    const evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end('<!doctype html><title>evil</title><p>hi</p>')
    })
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r))
    const evilPort = (evil.address() as AddressInfo).port
    const dashboard = await browser.newPage()
    await dashboard.addInitScript((t) => sessionStorage.setItem('countersign.operatorToken', t), stack.operatorToken)
    await dashboard.goto(`${stack.url}/approval-ui`)
    await dashboard.waitForSelector('#conn.live')
    try {
      const wallet = { address: anvilAccounts[3].address as Address }
      const intent = nativeIntent(parseEther('0.75').toString(), { wallet })
      const blocked = stack.post('/v1/tx/approve-request', intent)
      const card = dashboard.locator(`[data-request-id]`).filter({ hasText: 'Transfer 0.75 ETH' })
      await card.waitFor({ timeout: 10_000 })

      const page = await browser.newPage()
      await page.goto(`http://127.0.0.1:${evilPort}/`)
      const seen = await page.evaluate(
        ({ urls, token }) =>
          Promise.all(
            urls.map(
              (url) =>
                new Promise<{ url: string; opened: boolean; messages: string[]; code: number }>((resolve) => {
                  const result = { url, opened: false, messages: [] as string[], code: 0 }
                  const ws = new WebSocket(url)
                  ws.onopen = () => {
                    result.opened = true
                    ws.send(JSON.stringify({ type: 'auth', token }))
                  }
                  ws.onmessage = (m) => result.messages.push(String(m.data))
                  ws.onclose = (e) => resolve({ ...result, code: e.code })
                  setTimeout(() => resolve(result), 5000)
                }),
            ),
          ),
        { urls: targets, token: stack.operatorToken },
      )
      for (const s of seen) {
        expect(s, JSON.stringify(s)).toMatchObject({ opened: false, messages: [] })
        expect(s.code).toBe(1006)
      }
      await page.close()

      // The dashboard itself is unaffected: approve by click.
      await card.getByRole('button', { name: 'Approve' }).click()
      expect((await blocked).status).toBe(200)
    } finally {
      await dashboard.close()
      await new Promise((r) => evil.close(r))
    }
  })

  it('a spoofed symbol shows the chain’s symbol and amount with a red line, in the audit text too; a client’s "skill:" source is not a skill', async () => {
    // 90 TUSD (6 decimals on chain) declared as USDC with 12 decimals: the card once said "Transfer 0.00009 USDC" in green.
    const holder = anvilAccounts[2]
    const tusd = await deployTestToken({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: holder.privateKey, name: 'Test USD', symbol: 'TUSD', decimals: 6, supply: 1_000_000_000n })
    const spoofStack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000, tokenLimits: { [tusd]: { requireApprovalAbove: '0' } } } })
    // The holder's key is the signer's: approve-request asks no operator about a wallet the signer cannot sign for.
    await importKey(spoofStack.dataDir, holder.privateKey)
    await spoofStack.start({ approver: true })
    const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } })
    try {
      await page.addInitScript((t) => sessionStorage.setItem('countersign.operatorToken', t), spoofStack.operatorToken)
      await page.goto(`${spoofStack.url}/approval-ui`)
      await page.waitForSelector('#conn.live')
      const intent = intentFor(holder.address as Address, { type: 'transfer', asset: { kind: 'erc20', address: tusd, symbol: 'USDC', decimals: 12 }, to: '0x000000000000000000000000000000000000b0b0', amount: '90000000' }, {
        extra: { metadata: { source: 'skill:payroll-official', note: 'salary \u202eFDP.exe' } },
      })
      const blocked = spoofStack.post('/v1/tx/approve-request', intent)
      const card = page.locator('[data-request-id]').first()
      await card.waitFor({ timeout: 10_000 })
      const text = (await card.textContent()) ?? ''
      expect(text).toContain('Transfer 90 TUSD to 0x000000000000000000000000000000000000b0b0')
      expect(text).not.toContain('0.00009')
      expect(await card.getAttribute('class')).toContain('red')
      expect(await card.locator('.alert').textContent()).toContain('declared token')
      expect(text).not.toMatch(/Requested by/)
      expect(text).toContain('client says: skill:payroll-official')
      expect(text).toContain('salary \\u202eFDP.exe')
      expect(text).not.toContain('\u202e')
      mkdirSync(artifacts, { recursive: true })
      await page.screenshot({ path: path.join(artifacts, 'dashboard-spoofed-symbol.png'), fullPage: true })
      // Red: approving asks a second time.
      let asked = ''
      page.once('dialog', (d) => {
        asked = d.message()
        void d.accept()
      })
      await card.getByRole('button', { name: 'Approve' }).click()
      const approved = await blocked
      expect(asked).toContain('red line')
      expect(approved.status).toBe(200)
      expect(approved.body.description).toContain('Transfer 90 TUSD')
      expect(approved.body.riskFactors).toContainEqual(expect.objectContaining({ id: 'declared_token_mismatch', weight: 30 }))
      const events = ((await spoofStack.get('/v1/approvals/history?limit=50')).body.events as Array<{ intentId: string; event: string; data: Record<string, string> }>).filter((e) => e.intentId === intent.id)
      for (const name of ['approval_requested', 'approval_granted', 'web_approval_decided']) {
        expect(events.find((e) => e.event === name)?.data.action, name).toContain('Transfer 90 TUSD')
      }
      expect(events.find((e) => e.event === 'tx_built')?.data.description).toContain('Transfer 90 TUSD')
      expect(JSON.stringify(events)).not.toContain('0.00009')
    } finally {
      await page.close()
      await spoofStack.stop()
    }
  })
})
