import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { execFile } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, writeSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { canonicalize } from '../../canonical/jcs.js'
import { openAuditLog, type AuditLog } from '../../audit/auditLog.js'
import { auditKeyFingerprint, CHECKPOINT_EVENT, signCheckpoint, type LatestCheckpoint } from '../../audit/checkpoint.js'
import type { AuditRow } from '../../audit/schema.js'
import { LEGACY_AUDIT_TABLE } from '../../audit/tableCheck.js'
import { createBatchWriter, openAuditDb } from '../../audit/writer.js'
import { rewriteAuditRow, tamperAudit, truncateAudit } from '../testing/auditTamper.js'
import { runAuditCli } from './cli.js'
import { storedRowHash } from './rowChecks.js'
import { currentAuditSchema, schemaProblems } from './schemaCheck.js'
import { MAX_LISTED_PROBLEMS, verifyAuditChain, type AuditAnchor } from './verify.js'

let log: AuditLog | undefined
afterEach(async () => {
  await log?.close()
  log = undefined
})

const DEAD = '0x000000000000000000000000000000000000dEaD'
const ATTACKER = '0x1111111111111111111111111111111111111111'

/** A log the signer seals (checkpoints on), its anchor as signer.db would keep it. */
function signedLog() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-verify-'))
  const file = path.join(dir, 'audit.db')
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  let latest: LatestCheckpoint | null = null
  log = openAuditLog(file, {
    checkpoints: {
      sign: (head) => ({ key: auditKeyFingerprint(publicKey), signature: signCheckpoint(privateKey, head.seq, head.hash) }),
      written: (cp) => {
        latest = { seq: cp.seq, hash: cp.hash }
      },
    },
  })
  const anchor = (): AuditAnchor => ({ publicKey, latest })
  return { dir, file, anchor }
}

/** Four decisions, then a checkpoint sealing them (row 5), closed. */
async function sealedDecisions() {
  const s = signedLog()
  for (let i = 1; i <= 4; i++) await log!.append({ intentId: `i-${i}`, event: 'policy_evaluated', data: { allowed: true, n: i, to: DEAD } })
  await log!.checkpoint()
  await log!.close()
  log = undefined
  return s
}

function readRow(file: string, seq: number): AuditRow {
  const db = new Database(file, { readonly: true })
  try {
    return db.prepare<[number], AuditRow>('SELECT * FROM audit_events WHERE seq = ?').get(seq)!
  } finally {
    db.close()
  }
}

function setData(file: string, seq: number, text: string, rehash?: 'rehash') {
  tamperAudit(file, (db) => db.prepare('UPDATE audit_events SET data = ? WHERE seq = ?').run(text, seq), rehash ? seq : undefined)
}

describe('verify hashes the data text as stored, and only its canonical form passes', () => {
  it('a sealed row given a duplicate key (forged first, original last) is broken, though JSON.parse reads the original object', async () => {
    const s = await sealedDecisions()
    expect(readRow(s.file, 2).data).toBe(`{"allowed":true,"intentId":"i-2","n":2,"to":"${DEAD}"}`)
    // No hash recomputed, nothing after it touched: JSON.parse keeps the last
    // value of a key, so the object (and its canonical JSON) is the original.
    setData(s.file, 2, `{"allowed":false,"to":"${ATTACKER}","allowed":true,"intentId":"i-2","n":2,"to":"${DEAD}"}`)
    const db = new Database(s.file, { readonly: true })
    const seen = db.prepare<[], { allowed: number; recipient: string }>("SELECT json_extract(data, '$.allowed') AS allowed, json_extract(data, '$.to') AS recipient FROM audit_events WHERE seq = 2").get()
    db.close()
    // What SQLite's readers see is the forged first value.
    expect(seen).toEqual({ allowed: 0, recipient: ATTACKER })
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: false, problems: [{ seq: 2, kind: 'broken_row' }] })
  })

  it('a sealed row whose U+FFFD (EF BF BD) bytes were swapped for an invalid FF is broken, though Node reads the same text and hash', async () => {
    const s = signedLog()
    await log!.append({ intentId: 'i-1', event: 'tx_built', data: { description: 'caf\uFFFD 1' } })
    await log!.checkpoint()
    await log!.close()
    log = undefined
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: true })
    tamperAudit(s.file, (db) => {
      const stored = db.prepare<[], { bytes: Buffer }>('SELECT CAST(data AS BLOB) AS bytes FROM audit_events WHERE seq = 1').get()!.bytes
      const at = stored.indexOf(Buffer.from([0xef, 0xbf, 0xbd]))
      const swapped = Buffer.concat([stored.subarray(0, at), Buffer.from([0xff]), stored.subarray(at + 3)])
      db.prepare('UPDATE audit_events SET data = CAST(? AS TEXT) WHERE seq = 1').run(swapped)
    })
    // Node's reading is unchanged (the invalid byte decodes to U+FFFD again): only the bytes tell.
    expect(readRow(s.file, 1).data).toBe('{"description":"caf\uFFFD 1","intentId":"i-1"}')
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: false, problems: [{ seq: 1, kind: 'broken_row', problem: expect.stringContaining('its data is not stored as valid UTF-8') }] })
  })

  it.each([
    ['spaces', `{"allowed": true, "intentId": "i-3", "n": 3, "to": "${DEAD}"}`],
    ['a \\u escape', `{"allowed":true,"intentId":"\\u0069-3","n":3,"to":"${DEAD}"}`],
    ['1e0 for 1 (3e0 for 3)', `{"allowed":true,"intentId":"i-3","n":3e0,"to":"${DEAD}"}`],
  ])('a sealed row whose data is the same object written with %s is broken', async (_what, text) => {
    const s = await sealedDecisions()
    setData(s.file, 3, text)
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: false, problems: [{ seq: 3, kind: 'broken_row' }] })
  })

  it('with the hash recomputed over the tampered text and every later row re-linked, the canonical form check alone catches it', async () => {
    const s = await sealedDecisions()
    setData(s.file, 4, `{"allowed":false,"to":"${ATTACKER}","allowed":true,"intentId":"i-4","n":4,"to":"${DEAD}"}`, 'rehash')
    // The hash check passes: the stored hash is the writer's hash of the stored text.
    const row = readRow(s.file, 4)
    expect(storedRowHash(row)).toBe(row.hash)
    expect(verifyAuditChain(s.file)).toMatchObject({ ok: false, problems: [{ seq: 4, kind: 'broken_row', problem: expect.stringContaining('canonical JSON') }] })
    setData(s.file, 4, `{"allowed":true,  "intentId":"i-4","n":4,"to":"${DEAD}"}`, 'rehash')
    expect(verifyAuditChain(s.file)).toMatchObject({ ok: false, problems: [{ seq: 4, kind: 'broken_row', problem: expect.stringContaining('canonical JSON') }] })
  })

  it('data stored as a blob of the same bytes hashes like the text, and is broken all the same (readers see no JSON object)', async () => {
    const s = await sealedDecisions()
    tamperAudit(s.file, (db) => db.prepare('UPDATE audit_events SET data = CAST(data AS BLOB) WHERE seq = 2').run())
    const row = readRow(s.file, 2)
    expect(Buffer.isBuffer(row.data)).toBe(true)
    expect(storedRowHash(row)).toBe(row.hash)
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: false, problems: [{ seq: 2, kind: 'broken_row', problem: expect.stringContaining('data is not text') }] })
  })

  it('an untouched log verifies', async () => {
    const s = await sealedDecisions()
    expect(verifyAuditChain(s.file, s.anchor())).toEqual({ ok: true, rows: 5, checkpoints: 1, lastCheckpointSeq: 5, reanchors: [] })
  })
})

/**
 * Appends a well-formed, correctly chained row named `checkpoint` that the
 * signer never signed, as any process that can write audit.db can (through
 * the writer, whatever the append API refuses).
 */
function appendBogusCheckpoint(file: string): void {
  const db = openAuditDb(file)
  try {
    const data = { seq: 0, headHash: '0x', key: 'x', signature: 'x', intentId: 'system' }
    createBatchWriter(db)([{ id: randomUUID(), timestamp: Date.now(), intentId: 'system', event: CHECKPOINT_EVENT, dataJcs: canonicalize(data) }])
  } finally {
    db.close()
  }
}

describe('verify walks on past a problem and reports them all', () => {
  it('a bogus checkpoint row is named as not the signer\'s, without blaming the rows before it, and a rewrite after it is still found', async () => {
    const s = signedLog()
    for (let i = 1; i <= 4; i++) await log!.append({ intentId: `i-${i}`, event: 'policy_evaluated', data: { allowed: true, n: i, to: DEAD } })
    await log!.checkpoint()
    appendBogusCheckpoint(s.file)
    for (let i = 7; i <= 8; i++) await log!.append({ intentId: `i-${i}`, event: 'policy_evaluated', data: { allowed: true, n: i, to: DEAD } })
    await log!.checkpoint()
    await log!.close()
    log = undefined
    const fingerprint = auditKeyFingerprint(s.anchor().publicKey)
    const bogus = { seq: 6, kind: 'bad_checkpoint', problem: `it names key x, not the audit key ${fingerprint}: this checkpoint row is not one the signer wrote (forged, or its fields edited)` }
    expect(verifyAuditChain(s.file, s.anchor())).toEqual({ ok: false, rows: 9, checkpoints: 3, lastCheckpointSeq: 9, reanchors: [], problemCount: 1, kinds: { bad_checkpoint: 1 }, problems: [bogus] })
    // A rewrite after the bogus row, every later hash recomputed: found at the checkpoint that sealed it.
    rewriteAuditRow(s.file, 7, (d) => ({ ...d, allowed: false }))
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({
      ok: false,
      problemCount: 3,
      problems: [
        bogus,
        { seq: 9, kind: 'sealed_rows_changed', problem: expect.stringContaining('rows up to 8 were changed after they were sealed') },
        { seq: 9, kind: 'anchor_mismatch' },
      ],
    })
  })

  it('the signer.db result is reported after a broken row: a log with an edited row and its end cut off says both', async () => {
    const s = await sealedDecisions()
    tamperAudit(s.file, (db) => db.prepare(`UPDATE audit_events SET data = '{"allowed":false,"intentId":"i-2","n":2,"to":"${ATTACKER}"}' WHERE seq = 2`).run())
    truncateAudit(s.file, 2)
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({
      ok: false,
      rows: 3,
      problems: [
        { seq: 2, kind: 'broken_row', problem: expect.stringContaining('does not match its hash') },
        { seq: 4, kind: 'truncated', problem: "the log ends at seq 3, before the signer's latest checkpoint at seq 5 (rows were deleted from its end)" },
      ],
    })
  })

  it(`lists the first ${MAX_LISTED_PROBLEMS} problems and counts them all; the CLI prints one line each and the count`, async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-verify-many-'))
    const file = path.join(dir, 'audit.db')
    log = openAuditLog(file)
    for (let i = 1; i <= 30; i++) await log.append({ intentId: `i-${i}`, event: 'policy_evaluated', data: { n: i } })
    await log.close()
    log = undefined
    tamperAudit(file, (db) => db.prepare("UPDATE audit_events SET event = 'edited'").run())
    const result = verifyAuditChain(file)
    expect(result).toMatchObject({ ok: false, rows: 30, problemCount: 30 })
    expect(!result.ok && result.problems.map((p) => p.seq)).toEqual(Array.from({ length: MAX_LISTED_PROBLEMS }, (_, i) => i + 1))
    const lines: string[] = []
    expect(runAuditCli(['verify', '--db', file, '--chain-only'], { out: (l) => lines.push(l), err: (l) => lines.push(l), env: {} })).toBe(1)
    expect(lines).toHaveLength(MAX_LISTED_PROBLEMS + 1)
    expect(lines[0]).toBe('audit chain BROKEN at seq 1 (broken row): its content does not match its hash: the row was edited')
    expect(lines.at(-1)).toBe(`audit chain BROKEN: 30 problems in 30 events (the first ${MAX_LISTED_PROBLEMS} are listed)`)
  })
})

describe("verify checks the database's objects against the audit log's own", () => {
  const keepTrigger = "CREATE TRIGGER audit_events_keep BEFORE INSERT ON audit_events WHEN NEW.event='approval_rejected' BEGIN SELECT RAISE(IGNORE); END;"

  function exec(file: string, sql: string): void {
    const db = new Database(file)
    db.exec(sql)
    db.close()
  }

  function schemaProblemsOf(file: string, anchor?: AuditAnchor) {
    const result = verifyAuditChain(file, anchor)
    return result.ok ? [] : result.problems.filter((p) => p.kind === 'schema').map((p) => p.problem)
  }

  it('a planted trigger that drops an event silently fails verify, named with its SQL; every row is otherwise intact', async () => {
    const s = await sealedDecisions()
    exec(s.file, keepTrigger)
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({
      ok: false,
      problemCount: 1,
      problems: [
        {
          seq: null,
          kind: 'schema',
          problem:
            "trigger audit_events_keep on audit_events: CREATE TRIGGER audit_events_keep BEFORE INSERT ON audit_events WHEN NEW.event='approval_rejected' BEGIN SELECT RAISE(IGNORE); END is not one countersign creates (it can change what is written to or read from the log)",
        },
      ],
    })
    const lines: string[] = []
    expect(runAuditCli(['verify', '--db', s.file, '--chain-only'], { out: (l) => lines.push(l), err: (l) => lines.push(l), env: {} })).toBe(1)
    expect(lines[0]).toMatch(/^audit chain BROKEN \(schema changed\): trigger audit_events_keep on audit_events: /)
  })

  it('an index or a view on the log, another table, an append-only trigger changed or dropped: each is named', async () => {
    const s = await sealedDecisions()
    exec(
      s.file,
      `CREATE INDEX audit_events_by_event ON audit_events (event);
       CREATE VIEW approvals AS SELECT * FROM audit_events WHERE event = 'approval_granted';
       CREATE TABLE notes (x);
       DROP TRIGGER audit_events_no_update;
       CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events WHEN 0 BEGIN SELECT RAISE(ABORT, 'no'); END;
       DROP TRIGGER audit_events_no_delete;`,
    )
    const problems = schemaProblemsOf(s.file, s.anchor())
    expect(problems).toEqual([
      expect.stringMatching(/^index audit_events_by_event on audit_events: CREATE INDEX .* is not one countersign creates/),
      expect.stringMatching(/^view approvals: CREATE VIEW .* is not one countersign creates/),
      expect.stringMatching(/^table notes: CREATE TABLE notes \(x\) is not one countersign creates/),
      expect.stringMatching(/^trigger audit_events_no_update on audit_events: CREATE TRIGGER .* WHEN 0 .* is not as countersign creates it/),
      expect.stringMatching(/^trigger audit_events_no_delete is missing/),
    ])
  })

  it.each([
    [
      'the first version (UNIQUE on id, an index by intent)',
      `CREATE TABLE IF NOT EXISTS audit_events (
      seq        INTEGER PRIMARY KEY,
      id         TEXT    NOT NULL UNIQUE,
      timestamp  INTEGER NOT NULL,
      intent_id  TEXT    NOT NULL,
      event      TEXT    NOT NULL,
      data       TEXT    NOT NULL,
      prev_hash  TEXT    NOT NULL,
      hash       TEXT    NOT NULL
    );
    CREATE INDEX IF NOT EXISTS audit_events_by_intent ON audit_events (intent_id, seq);`,
    ],
    [
      'the second (an index by intent)',
      `CREATE TABLE IF NOT EXISTS audit_events (
      seq        INTEGER PRIMARY KEY,
      id         TEXT    NOT NULL,
      timestamp  INTEGER NOT NULL,
      intent_id  TEXT    NOT NULL,
      event      TEXT    NOT NULL,
      data       TEXT    NOT NULL,
      prev_hash  TEXT    NOT NULL,
      hash       TEXT    NOT NULL
    );
    CREATE INDEX IF NOT EXISTS audit_events_by_intent ON audit_events (intent_id, seq);`,
    ],
  ])('a log created by %s verifies', async (_version, ddl) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-verify-legacy-'))
    const file = path.join(dir, 'audit.db')
    exec(file, ddl)
    log = openAuditLog(file)
    await log.append({ intentId: 'i-1', event: 'policy_evaluated', data: { allowed: true } })
    await log.close()
    log = undefined
    expect(verifyAuditChain(file)).toEqual({ ok: true, rows: 1, checkpoints: 0, lastCheckpointSeq: 0, reanchors: [] })
  })

  it("the UNIQUE index on id is accepted only with the first version's table", () => {
    const current = currentAuditSchema()
    const autoindex = { type: 'index', name: 'sqlite_autoindex_audit_events_1', tbl_name: 'audit_events', sql: null }
    expect(schemaProblems([...current, autoindex], current)).toEqual(['index sqlite_autoindex_audit_events_1 on audit_events is not one countersign creates (it can change what is written to or read from the log)'])
  })
})

describe('verify and tail read audit_events only when it is the table countersign makes', () => {
  const compiledCli = fileURLToPath(new URL('../../../dist/server/audit/cli.js', import.meta.url))
  const endlessView = `CREATE VIEW audit_events AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
    SELECT x AS seq, 'a' AS id, 1 AS timestamp, 'i' AS intent_id, 'e' AS event, '{}' AS data, 'p' AS prev_hash, 'h' AS hash FROM c`

  function fileWith(sql: string): string {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-verify-table-')), 'audit.db')
    const db = new Database(file)
    db.exec(sql)
    db.close()
    return file
  }

  /** The compiled CLI in a child with a deadline: a walk that never ends must fail the test, not hang it. */
  async function cliWithin(args: string[]): Promise<{ code: number | null; text: string; killed: boolean }> {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [compiledCli, ...args], { timeout: 10_000 })
      return { code: 0, text: stdout + stderr, killed: false }
    } catch (e) {
      const err = e as { code?: number; killed?: boolean; stdout?: string; stderr?: string }
      return { code: err.code ?? null, text: `${err.stdout ?? ''}${err.stderr ?? ''}`, killed: err.killed === true }
    }
  }

  it('a view over an endless recursive CTE: verify says so at once and reads no row; tail refuses in one line', async () => {
    const file = fileWith(endlessView)
    const verified = await cliWithin(['verify', '--db', file, '--chain-only'])
    expect(verified.killed, 'verify still walking after 10 s').toBe(false)
    expect(verified.code).toBe(1)
    expect(verified.text).toContain("audit chain BROKEN (schema changed): audit_events is a view, not the audit log's table")
    expect(verified.text).toContain('audit chain BROKEN: 4 problems in 0 events')
    const tailed = await cliWithin(['tail', '--db', file])
    expect(tailed.killed, 'tail still reading after 10 s').toBe(false)
    expect(tailed.code).toBe(2)
    expect(tailed.text.trim()).toBe(`cannot read audit log at ${file}: audit_events is a view, not the audit log's table: a view can return anything, endlessly too (its rows were not read)`)
  }, 30_000)

  it('a table of other columns, or none, is reported and not read', () => {
    for (const [sql, problem] of [
      ['CREATE TABLE audit_events (x); INSERT INTO audit_events VALUES (1)', 'table audit_events is not as countersign creates it'],
      ['CREATE TABLE other (x)', 'audit_events is missing'],
      ['CREATE VIEW "AUDIT_EVENTS" AS SELECT 1 AS seq', 'audit_events is a view'],
    ] as const) {
      const result = verifyAuditChain(fileWith(sql))
      expect(result.ok, sql).toBe(false)
      expect(result.rows).toBe(0)
      expect(result.ok ? [] : result.problems.map((p) => p.problem).join('\n'), sql).toContain(problem)
    }
  })
})

describe('verify asks SQLite whether the file itself is sound before it walks the chain', () => {
  const PAGE = 4096

  /** 300 decisions in three sealed batches: audit_events spans an interior page and many leaves. */
  async function manyPagesLog() {
    const s = signedLog()
    for (let batch = 0; batch < 3; batch++) {
      const appends = Array.from({ length: 100 }, (_, i) => log!.append({ intentId: `intent-${batch}${String(i).padStart(3, '0')}`, event: 'policy_evaluated', data: { allowed: true, to: DEAD } }))
      await Promise.all(appends)
      await log!.checkpoint()
    }
    await log!.close()
    log = undefined
    moveWalIntoFile(s.file)
    return s
  }

  /** Every committed page into audit.db itself, so that the bytes changed below are the ones SQLite reads. */
  function moveWalIntoFile(file: string): void {
    const db = new Database(file)
    try {
      expect(db.pragma('wal_checkpoint(TRUNCATE)', { simple: true })).toBe(0)
    } finally {
      db.close()
    }
  }

  /** The b-tree pages of one table or index, as SQLite's dbstat lists them. */
  function pagesOf(file: string, name: string): Array<{ pageno: number; pagetype: 'internal' | 'leaf'; ncell: number }> {
    const db = new Database(file, { readonly: true })
    try {
      expect(db.pragma('page_size', { simple: true })).toBe(PAGE)
      return db.prepare<[string], { pageno: number; pagetype: 'internal' | 'leaf'; ncell: number }>('SELECT pageno, pagetype, ncell FROM dbstat WHERE name = ? ORDER BY pageno').all(name)
    } finally {
      db.close()
    }
  }

  function overwrite(file: string, offset: number, bytes: Buffer): void {
    const fd = openSync(file, 'r+')
    try {
      writeSync(fd, bytes, 0, bytes.length, offset)
    } finally {
      closeSync(fd)
    }
  }

  function cli(argv: string[]) {
    const lines: string[] = []
    const code = runAuditCli(argv, { out: (l) => lines.push(l), err: (l) => lines.push(l), env: {} })
    return { code, lines }
  }

  function rowCount(file: string): number {
    const db = new Database(file, { readonly: true })
    try {
      return db.prepare<[], number>('SELECT count(*) FROM audit_events').pluck().get()!
    } finally {
      db.close()
    }
  }

  it('a sound log of many pages verifies OK', async () => {
    const s = await manyPagesLog()
    expect(pagesOf(s.file, 'audit_events').filter((p) => p.pagetype === 'internal').length).toBeGreaterThan(0)
    expect(verifyAuditChain(s.file, s.anchor())).toEqual({ ok: true, rows: 303, checkpoints: 3, lastCheckpointSeq: 303, reanchors: [] })
    expect(cli(['verify', '--db', s.file, '--chain-only'])).toEqual({ code: 0, lines: ['audit chain OK: 303 events (hash chain only: checkpoints and truncation not checked)'] })
  })

  it("the last leaf page's cell count lowered: its last rows vanish from every read without an error, and verify names the damage", async () => {
    const s = await manyPagesLog()
    const last = pagesOf(s.file, 'audit_events').filter((p) => p.pagetype === 'leaf').at(-1)!
    // The b-tree page header's cell count: bytes 3-4 of the page.
    overwrite(s.file, (last.pageno - 1) * PAGE + 3, Buffer.from([0, last.ncell - 3]))
    // What a reader sees: the chain of the rows that remain is whole, and it ends 3 rows early.
    expect(rowCount(s.file)).toBe(300)
    expect(verifyAuditChain(s.file, s.anchor())).toEqual({
      ok: false,
      rows: 0,
      checkpoints: 0,
      lastCheckpointSeq: 0,
      reanchors: [],
      problemCount: 1,
      kinds: { damaged_file: 1 },
      problems: [
        {
          seq: null,
          kind: 'damaged_file',
          problem: expect.stringMatching(
            new RegExp(`^${escapeRegExp(s.file)} is damaged: SQLite's integrity_check found "Fragmentation of \\d+ bytes reported as 0 on page ${last.pageno}"\\. .*; restore it from a backup \\(its rows were not read\\)$`),
          ),
        },
      ],
    })
    const chainOnly = cli(['verify', '--db', s.file, '--chain-only'])
    expect(chainOnly.code).toBe(1)
    expect(chainOnly.lines).toEqual([expect.stringMatching(/^audit chain BROKEN \(database file damaged\): .* is damaged: SQLite's integrity_check found "Fragmentation of /), 'audit chain BROKEN: 1 problem in a damaged file (0 events read)'])
  })

  it('bytes overwritten in the middle of an interior page of audit_events: a clear verdict, not "database disk image is malformed"', async () => {
    const s = await manyPagesLog()
    const interior = pagesOf(s.file, 'audit_events').find((p) => p.pagetype === 'internal')!
    // Past the 12-byte header: the cell pointers, which now point outside the page.
    overwrite(s.file, (interior.pageno - 1) * PAGE + 12, Buffer.alloc(32, 0xff))
    expect(() => rowCount(s.file)).toThrow(expect.objectContaining({ code: 'SQLITE_CORRUPT' }))
    const result = cli(['verify', '--db', s.file, '--chain-only'])
    expect(result.code).toBe(1)
    expect(result.lines).toHaveLength(2)
    expect(result.lines[0]).toMatch(new RegExp(`^audit chain BROKEN \\(database file damaged\\): ${escapeRegExp(s.file)} is damaged: SQLite's integrity_check found "Tree \\d+ page ${interior.pageno} cell \\d+: [^"]+"; "[^"]+"; "[^"]+"; and more\\. `))
  })

  it('a header that is not SQLite\'s: named as such in the same shape, not a raw SQLITE_NOTADB', async () => {
    const s = await manyPagesLog()
    overwrite(s.file, 0, Buffer.alloc(16, 0x41))
    const result = cli(['verify', '--db', s.file, '--chain-only'])
    expect(result).toEqual({
      code: 1,
      lines: [
        `audit chain BROKEN (database file damaged): ${s.file} is not a SQLite database, or its header is damaged (SQLITE_NOTADB: file is not a database); restore it from a backup (its rows were not read)`,
        'audit chain BROKEN: 1 problem in a damaged file (0 events read)',
      ],
    })
  })

  it('an index key changed in a log of the first layout: quick_check finds nothing, lookups by intent miss rows, integrity_check names them', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-verify-damaged-index-'))
    const file = path.join(dir, 'audit.db')
    const db = new Database(file)
    db.exec(`${LEGACY_AUDIT_TABLE.sql}; CREATE INDEX audit_events_by_intent ON audit_events (intent_id, seq);`)
    db.close()
    log = openAuditLog(file)
    await Promise.all(Array.from({ length: 300 }, (_, i) => log!.append({ intentId: `intent-${String(i).padStart(3, '0')}`, event: 'policy_evaluated', data: { n: i } })))
    await log.close()
    log = undefined
    moveWalIntoFile(file)
    const leaf = pagesOf(file, 'audit_events_by_intent').find((p) => p.pagetype === 'leaf')!
    const page = readFileSync(file).subarray((leaf.pageno - 1) * PAGE, leaf.pageno * PAGE)
    const at = page.indexOf('intent-0')
    expect(at).toBeGreaterThan(0)
    // intent-0xy becomes intent-9xy in the index alone: the entry no longer matches its row.
    overwrite(file, (leaf.pageno - 1) * PAGE + at + 'intent-'.length, Buffer.from('9'))
    const key = page.subarray(at, at + 'intent-000'.length).toString()
    const reader = new Database(file, { readonly: true })
    try {
      expect(reader.pragma('quick_check', { simple: true })).toBe('ok')
      expect(reader.prepare<[string], number>('SELECT count(*) FROM audit_events WHERE intent_id = ?').pluck().get(key)).toBe(0)
      expect(reader.prepare<[string], number>('SELECT count(*) FROM audit_events NOT INDEXED WHERE intent_id = ?').pluck().get(key)).toBe(1)
    } finally {
      reader.close()
    }
    expect(verifyAuditChain(file)).toMatchObject({
      ok: false,
      problems: [{ seq: null, kind: 'damaged_file', problem: expect.stringMatching(/"row \d+ missing from index audit_events_by_intent"/) }],
    })
  })
})

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
