import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { RATE_LIMIT_WINDOW_MS } from '@countersign/shared'
import { RecentWindow } from './recentWindow.js'
import { openSignerDb } from './signerDb.js'
import { createSignatures, type StoredSignature } from './signatures.js'

describe('the rate window kept in memory', () => {
  it('counts exactly what a scan would, through adds, removals and a moving bound', () => {
    let seed = 7
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    const naive: number[] = []
    const w = new RecentWindow([], 1000)
    let now = 10_000
    for (let step = 0; step < 5000; step++) {
      now += Math.floor(random() * 3)
      const t = now - Math.floor(random() * 50) // sometimes out of order, sometimes equal
      if (random() < 0.15 && naive.length > 0) {
        const victim = naive[Math.floor(random() * naive.length)]!
        naive.splice(naive.indexOf(victim), 1)
        w.remove(victim)
      } else {
        naive.push(t)
        w.add(t)
      }
      const since = now - 500
      expect(w.countAfter(since)).toBe(naive.filter((x) => x > since).length)
    }
  })
})

describe('Signatures.recentCount', () => {
  const sig = (n: number, wallet: string, createdAt: number): StoredSignature => ({
    intentId: `intent-${n}`,
    txRequestHash: `0x${n}`,
    signerAddress: wallet,
    chainId: 1,
    nonce: n,
    signedTx: '0x',
    txHash: `0xtx${n}`,
    tokenId: null,
    createdAt,
    replacesTxHash: null,
  })

  it('counts the wallet’s signatures and replaced signatures in the window, from the database and after writes', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-window-'))
    const file = path.join(dir, 'signer.db')
    const now = 50_000_000
    const a = '0xaaaa'
    const first = openSignerDb(file)
    const before = createSignatures(first.db)
    before.insert(sig(1, a, now - RATE_LIMIT_WINDOW_MS - 1)) // outside the window
    before.insert(sig(2, a, now - 10))
    before.insert(sig(3, '0xbbbb', now - 10)) // another wallet
    first.db.close()

    // A restart: the window is read from signer.db.
    const { db } = openSignerDb(file)
    const s = createSignatures(db)
    expect(s.recentCount(a, now)).toBe(1)
    expect(s.recentCount(a.toUpperCase(), now)).toBe(1)
    s.insert(sig(4, a, now))
    expect(s.recentCount(a, now)).toBe(2)
    // Replacing intent 4's signature: the replaced one still counts, and so does the new one.
    const old = s.byIntent('intent-4')!
    s.replace(old, { ...sig(4, a, now + 5), txHash: '0xtx4b', nonce: 9 }, now + 5)
    expect(s.recentCount(a, now + 5)).toBe(3)
    // The hour passes.
    expect(s.recentCount(a, now + RATE_LIMIT_WINDOW_MS)).toBe(2)
    expect(s.recentCount(a, now + RATE_LIMIT_WINDOW_MS + 10)).toBe(0)
  })
})
