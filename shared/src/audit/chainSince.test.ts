import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { rewriteAuditRow, truncateAudit } from '../server/testing/auditTamper.js'
import { openAuditLog } from './auditLog.js'
import { createChainCheck } from './chainSince.js'
import { openAuditDb } from './writer.js'

async function logOf(n: number): Promise<string> {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-chain-')), 'audit.db')
  const log = openAuditLog(file)
  for (let i = 0; i < n; i++) await log.append({ intentId: `i-${i}`, event: 'policy_evaluated', data: { i } })
  await log.close()
  return file
}

const rowAt = (file: string, seq: number) => {
  const db = openAuditDb(file)
  try {
    return db.prepare<[number], { seq: number; hash: string }>('SELECT seq, hash FROM audit_events WHERE seq = ?').get(seq)!
  } finally {
    db.close()
  }
}

describe('createChainCheck (what the signer asks before it signs a checkpoint)', () => {
  it('a log that continues from the anchor passes, also after a walk made earlier outside the transaction and rows added since', async () => {
    const file = await logOf(10)
    const anchor = rowAt(file, 4)
    const db = openAuditDb(file)
    const check = createChainCheck(db)
    check.advance(anchor)
    const more = openAuditLog(file)
    await more.append({ intentId: 'late', event: 'tx_built', data: {} })
    await more.close()
    expect(check(anchor)).toBeNull()
    db.close()
  })

  it('rows before the anchor rewritten and re-hashed (the anchor row changes with them) fail, even after an earlier walk', async () => {
    const file = await logOf(10)
    const anchor = rowAt(file, 6)
    const db = openAuditDb(file)
    const check = createChainCheck(db)
    check.advance(anchor)
    rewriteAuditRow(file, 3, (d) => ({ ...d, i: 99 }))
    expect(check(anchor)).toBe('the row at seq 6, the last checkpoint the signer wrote, no longer has the hash it recorded')
    db.close()
  })

  it('the anchor gone (log cut back) fails; the row an earlier walk reached gone makes it walk again from the anchor', async () => {
    const file = await logOf(10)
    const db = openAuditDb(file)
    const check = createChainCheck(db)
    const early = rowAt(file, 5)
    check.advance(early)
    truncateAudit(file, 3) // rows 8..10 gone: the walk's end is gone, the anchor is not
    expect(check(early)).toBeNull()
    truncateAudit(file, 4) // now row 5 too
    expect(check(early)).toBe('the row at seq 5, the last checkpoint the signer wrote, is gone')
    db.close()
  })
})
