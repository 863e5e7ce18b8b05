import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { openAuditLog } from '../../audit/auditLog.js'
import { auditKeyFingerprint, signCheckpoint, SIGNER_CHECKPOINT_TABLE, type LatestCheckpoint } from '../../audit/checkpoint.js'
import { rewriteAuditRow, stripCheckpoints } from '../testing/auditTamper.js'
import { hasHiddenCharacters } from '../display/escape.js'
import { runAuditCli } from './cli.js'

function writePublicKey(file: string, key: KeyObject): void {
  writeFileSync(file, key.export({ type: 'spki', format: 'pem' }) as string)
}

/** signer.db as the signer keeps it: the latest checkpoint, or no row yet. */
function writeSignerDb(file: string, latest: LatestCheckpoint | null): void {
  const db = new Database(file)
  db.exec(`CREATE TABLE ${SIGNER_CHECKPOINT_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL, head_seq INTEGER NOT NULL, head_hash TEXT NOT NULL, written_at INTEGER NOT NULL)`)
  if (latest) db.prepare(`INSERT INTO ${SIGNER_CHECKPOINT_TABLE} VALUES (1, ?, ?, 0, '', 0)`).run(latest.seq, latest.hash)
  db.close()
}

/**
 * The systemd layout (docs/operations.md): the log in the shared audit
 * directory, which the gateway and the approver can write, and the signer's
 * data directory holding audit-key.pub, signer.db and a link to the log.
 */
async function systemdLayout() {
  const root = mkdtempSync(path.join(os.tmpdir(), 'cs-audit-cli-'))
  const shared = path.join(root, 'audit')
  const signer = path.join(root, 'signer')
  mkdirSync(shared)
  mkdirSync(signer)
  const file = path.join(shared, 'audit.db')
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  let latest: LatestCheckpoint | null = null
  const log = openAuditLog(file, {
    checkpoints: {
      sign: (head) => ({ key: auditKeyFingerprint(publicKey), signature: signCheckpoint(privateKey, head.seq, head.hash) }),
      written: (cp) => {
        latest = { seq: cp.seq, hash: cp.hash }
      },
    },
  })
  for (let i = 1; i <= 4; i++) await log.append({ intentId: `i-${i}`, event: 'policy_evaluated', data: { approved: true } })
  await log.checkpoint()
  await log.close()
  writePublicKey(path.join(signer, 'audit-key.pub'), publicKey)
  writeSignerDb(path.join(signer, 'signer.db'), latest)
  symlinkSync('../audit/audit.db', path.join(signer, 'audit.db'))
  return { shared, signer, file, fingerprint: auditKeyFingerprint(publicKey), key: path.join(signer, 'audit-key.pub'), signerDb: path.join(signer, 'signer.db') }
}

/**
 * What anyone who can write the shared audit directory can do: rewrite every
 * row consistently with no checkpoint left, and put a key of their own and a
 * signer.db recording no checkpoint beside the log.
 */
function rewriteAndPlant(l: { shared: string; file: string }): void {
  rewriteAuditRow(l.file, 2, (d) => ({ ...d, approved: false }))
  stripCheckpoints(l.file)
  writePublicKey(path.join(l.shared, 'audit-key.pub'), generateKeyPairSync('ed25519').publicKey)
  writeSignerDb(path.join(l.shared, 'signer.db'), null)
}

function cli(argv: string[]) {
  const lines: string[] = []
  const code = runAuditCli(argv, { out: (s) => lines.push(s), err: (s) => lines.push(s), env: {} })
  return { code, text: lines.join('\n') }
}

describe('countersign-audit verify --db: the anchor never comes from beside the log', () => {
  it('planted audit-key.pub and signer.db beside a rewritten log are not used: --db alone is refused in words (exit 2)', async () => {
    const l = await systemdLayout()
    rewriteAndPlant(l)
    const alone = cli(['verify', '--db', l.file])
    expect(alone.code).toBe(2)
    expect(alone.text).toContain(
      "verify --db needs --audit-key FILE (the signer's audit-key.pub) and --signer-db FILE (the signer's signer.db): it does not take the signer's audit key or signer.db from beside the audit log",
    )
    expect(alone.text).not.toContain('audit chain OK')
    const keyOnly = cli(['verify', '--db', l.file, '--audit-key', l.key])
    expect(keyOnly.code).toBe(2)
    expect(keyOnly.text).toMatch(/^verify --db needs --signer-db FILE \(the signer's signer\.db\): /)
    // Named, or through the signer's data directory, the rewrite is found.
    expect(cli(['verify', '--db', l.file, '--audit-key', l.key, '--signer-db', l.signerDb])).toMatchObject({ code: 1, text: expect.stringMatching(/^audit chain BROKEN/) })
    expect(cli(['verify', '--db', l.file, '--data-dir', l.signer])).toMatchObject({ code: 1, text: expect.stringMatching(/^audit chain BROKEN/) })
    expect(cli(['verify', '--data-dir', l.signer])).toMatchObject({ code: 1, text: expect.stringMatching(/^audit chain BROKEN/) })
    // --chain-only still takes --db alone, and says what it does not check.
    expect(cli(['verify', '--db', l.file, '--chain-only'])).toMatchObject({ code: 0, text: expect.stringContaining('hash chain only') })
  })

  it('--db with --audit-key and --signer-db verifies, and the OK line names the key by its fingerprint', async () => {
    const l = await systemdLayout()
    const named = cli(['verify', '--db', l.file, '--audit-key', l.key, '--signer-db', l.signerDb])
    expect(named).toEqual({
      code: 0,
      text: `audit chain OK: 5 events, 1 signed checkpoints (the last at seq 5, 0 events after it not yet covered); checked with audit key ${l.fingerprint} (${l.key}) and the latest checkpoint in ${l.signerDb}`,
    })
    expect(cli(['verify', '--data-dir', l.signer])).toEqual(named)
    expect(cli(['verify', '--db', l.file, '--data-dir', l.signer])).toEqual(named)
  })
})

describe('countersign-audit verify: a damaged signer.db', () => {
  it('is named in the BROKEN shape (exit 1), not read as "no checkpoint yet", which blamed the log', async () => {
    const l = await systemdLayout()
    const reader = new Database(l.signerDb, { readonly: true })
    const page = reader.prepare<[string], { pageno: number; pageSize: number }>('SELECT pageno, (SELECT page_size FROM pragma_page_size) AS pageSize FROM dbstat WHERE name = ?').get(SIGNER_CHECKPOINT_TABLE)!
    reader.close()
    // The page's cell count (bytes 3-4 of its header) zeroed: the checkpoint row is no longer there to read.
    const fd = openSync(l.signerDb, 'r+')
    writeSync(fd, Buffer.from([0, 0]), 0, 2, (page.pageno - 1) * page.pageSize + 3)
    closeSync(fd)
    const r = cli(['verify', '--data-dir', l.signer])
    expect(r.code).toBe(1)
    const lines = r.text.split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^audit chain BROKEN \(database file damaged\): /)
    expect(lines[0]).toContain(`${l.signerDb} is damaged: SQLite's integrity_check found "Fragmentation of `)
    expect(lines[0]).toContain(` on page ${page.pageno}"`)
    expect(lines[1]).toBe("audit chain BROKEN: 1 problem (signer.db's latest checkpoint cannot be read, so the log was not walked; --chain-only checks its hash chain alone)")
    // The log itself is sound.
    expect(cli(['verify', '--data-dir', l.signer, '--chain-only'])).toMatchObject({ code: 0 })
  })
})

describe('countersign-audit prints nothing from the file raw', () => {
  const ESC = '\u001b'
  /** What the reviewer planted: a trigger whose name erases the line and draws a fake OK, then conceals the rest. */
  const fakeOk = `${ESC}[2K${ESC}[1A${ESC}[2K\raudit chain OK: 5 events${ESC}[8m`

  it('verify: a planted trigger whose name carries terminal escapes is named with them escaped', async () => {
    const l = await systemdLayout()
    const db = new Database(l.file)
    db.exec(`CREATE TRIGGER "x${fakeOk}" BEFORE INSERT ON audit_events WHEN NEW.event = 'signature_created' BEGIN SELECT RAISE(IGNORE); END`)
    db.close()
    const r = cli(['verify', '--data-dir', l.signer])
    expect(r.code).toBe(1)
    expect(r.text).not.toContain(ESC)
    expect(r.text).not.toContain('\r')
    expect(hasHiddenCharacters(r.text.replaceAll('\n', ''))).toBe(false)
    expect(r.text).toContain('trigger x\\u001b[2K\\u001b[1A')
    expect(r.text.split('\n').filter((line) => line.startsWith('audit chain OK'))).toEqual([])
  })

  it('verify: values of a forged checkpoint row and of signer.db are escaped in the problems', async () => {
    const l = await systemdLayout()
    rewriteAuditRow(l.file, 5, (d) => ({ ...d, key: `k${fakeOk}` }))
    rmSync(l.signerDb)
    writeSignerDb(l.signerDb, { seq: 5, hash: `h\u009b2J\u202e` })
    const r = cli(['verify', '--data-dir', l.signer])
    expect(r.code).toBe(1)
    expect(r.text).toContain('it names key k\\u001b[2K')
    expect(hasHiddenCharacters(r.text.replaceAll('\n', ''))).toBe(false)
  })

  it('tail: an event whose data or names carry controls prints one JSON line each, escaped, the same value when parsed', async () => {
    const l = await systemdLayout()
    const data = { note: `a\u007fb\u009b2Jc\u202egnp.exe${ESC}[8m`, tag: 'ok\u{e0041}' }
    const log = openAuditLog(l.file)
    await log.append({ intentId: `i\u2066x`, event: 'policy_evaluated', data })
    await log.close()
    const r = cli(['tail', '-n', '1', '--db', l.file])
    expect(r.code).toBe(0)
    expect(r.text.split('\n')).toHaveLength(1)
    expect(hasHiddenCharacters(r.text)).toBe(false)
    const shown = JSON.parse(r.text) as { intentId: string; data: Record<string, unknown> }
    expect(shown.intentId).toBe('i\u2066x')
    expect(shown.data).toMatchObject(data)
  })
})
