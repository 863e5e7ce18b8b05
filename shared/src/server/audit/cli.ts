#!/usr/bin/env node
import { existsSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import Database from 'better-sqlite3'
import { toShownEvent } from '../../audit/auditLog.js'
import type { AuditRow } from '../../audit/schema.js'
import { loadAuditAnchor } from './anchor.js'
import { AUDIT_PUBLIC_KEY_FILE, auditKeyFingerprint } from '../../audit/checkpoint.js'
import { readNewestSeq, verifyAuditChain, type AuditAnchor, type AuditProblemKind } from './verify.js'
import { DamagedDatabaseError } from './fileCheck.js'
import { auditTableProblem, readSchema } from './schemaCheck.js'
import { dataDirOption, readDataDir } from '../../config/common.js'
import { describeFailure } from '../../operatorError.js'
import { assertDatabaseFile } from '../../files/privateFiles.js'
import { escapeForDisplay, escapeJsonForDisplay } from '../display/escape.js'

const USAGE = `usage: countersign-audit verify [--data-dir DIR] [--db FILE] [--audit-key FILE] [--signer-db FILE] [--chain-only]
       countersign-audit tail [-n N] [--data-dir DIR | --db FILE]
verify checks the hash chain, every checkpoint's signature against the
signer's audit key (DIR/audit-key.pub), that the log reaches the signer's
latest checkpoint (DIR/signer.db), and that every signature signer.db keeps
has its event in the log, sealed by a checkpoint; DIR is the signer's data
directory. It first has SQLite check every page of audit.db and signer.db
(integrity_check): a damaged file fails verify, named with SQLite's first
findings.
With --db FILE, name the key and signer.db (--audit-key, --signer-db) or the
signer's data directory (--data-dir): verify never takes them from beside FILE.
--chain-only checks the hash chain alone, which proves nothing against
someone who can write audit.db.`

/**
 * Why --db without the anchor's files is refused: the directory of a log
 * given by path is, in the systemd layout, the shared audit directory that
 * the gateway and the approver can write, and whoever can write the log
 * could put a key and a signer.db of their own beside it.
 */
function anchorNotNamed(missing: string[]): string {
  return (
    `verify --db needs ${missing.join(' and ')}: it does not take the signer's audit key or signer.db from beside the audit log, ` +
    `where whoever can write the log could put their own. Name them, or give the signer's data directory with --data-dir DIR ` +
    `(--chain-only checks the hash chain alone)`
  )
}

const KIND_TEXT: Record<AuditProblemKind, string> = {
  damaged_file: 'database file damaged',
  schema: 'schema changed',
  broken_row: 'broken row',
  bad_checkpoint: 'bad checkpoint signature',
  sealed_rows_changed: 'sealed rows changed',
  anchor_mismatch: "not signer.db's latest checkpoint",
  truncated: 'log shorter than the last checkpoint',
  unaudited_signature: 'unaudited signature',
  signature_not_sealed: 'signature not sealed',
  unknown_signature: 'signature the signer does not keep',
}

/** The OK line's note of re-anchors: the log passed, but it once lost the signer's checkpoint. */
function reanchored(seqs: readonly number[]): string {
  if (seqs.length === 0) return ''
  const times = seqs.length === 1 ? 'once' : `${seqs.length} times`
  return `; re-anchored by an operator ${times}, the last at seq ${seqs.at(-1)} (the log had lost the signer's checkpoint then: countersign-audit tail shows the audit_reanchored event)`
}

interface Io {
  out: (s: string) => void
  err: (s: string) => void
  env: Record<string, string | undefined>
}

/** Returns the exit code. */
export function runAuditCli(argv: string[], io: Io): number {
  const [command, ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') {
    io.out(USAGE)
    return 0
  }
  let db: string | undefined
  let dataDir: string | undefined
  let keyFile: string | undefined
  let signerDb: string | undefined
  let chainOnly = false
  let n = 20
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i]
    const value = rest[i + 1]
    if (flag === '--chain-only') {
      chainOnly = true
      continue
    }
    if ((flag === '--data-dir' || flag === '--db' || flag === '-n' || flag === '--audit-key' || flag === '--signer-db') && value === undefined) {
      io.err(`${flag} needs a value\n${USAGE}`)
      return 2
    }
    if (flag === '--data-dir') dataDir = value!
    else if (flag === '--db') db = value!
    else if (flag === '--audit-key') keyFile = value!
    else if (flag === '--signer-db') signerDb = value!
    else if (flag === '-n') {
      if (!/^[1-9][0-9]*$/.test(value!)) {
        io.err(`-n needs a positive whole number, got ${value}\n${USAGE}`)
        return 2
      }
      n = Math.min(10_000, Number(value))
    }
    else {
      io.err(`unknown option ${flag}\n${USAGE}`)
      return 2
    }
    i++
  }
  // The signer's data directory: named, or without --db the configured one.
  // Never the directory of a --db file (see anchorNotNamed).
  let dir: string | undefined
  try {
    dir = dataDir !== undefined ? dataDirOption(dataDir) : db === undefined ? readDataDir(io.env) : undefined
  } catch (err) {
    io.err(describeFailure(err))
    return 1
  }
  const file = db ?? path.join(dir!, 'audit.db') // dir is set whenever --db is not
  if (command !== 'verify' && command !== 'tail') {
    io.err(USAGE)
    return 2
  }
  // The anchor verify checks against: named, or the signer's files beside the data dir's log.
  const key = keyFile ?? (dir === undefined ? undefined : path.join(dir, AUDIT_PUBLIC_KEY_FILE))
  const state = signerDb ?? (dir === undefined ? undefined : path.join(dir, 'signer.db'))
  const anchored = command === 'verify' && !chainOnly
  if (!existsSync(file)) {
    // A log signer.db records a checkpoint of was there: gone, it is the log cut to nothing (found by review:
    // the audit directory is group-writable, and a deleted audit.db gave exit 2, "could not be read").
    const deleted = anchored && key !== undefined && state !== undefined ? recordedCheckpointSeq(key, state) : null
    if (deleted !== null) {
      io.out(escapeForDisplay(`audit chain BROKEN at seq 1 (${KIND_TEXT.truncated}): there is no audit log at ${file}, but signer.db records a checkpoint at seq ${deleted}: the log was deleted`))
      io.out('audit chain BROKEN: 1 problem')
      return 1
    }
    io.err(`no audit log at ${file}`)
    return 2
  }
  let anchor: CheckedAnchor | undefined
  if (anchored) {
    if (key === undefined || state === undefined) {
      const missing = [...(key === undefined ? ["--audit-key FILE (the signer's audit-key.pub)"] : []), ...(state === undefined ? ["--signer-db FILE (the signer's signer.db)"] : [])]
      io.err(`${anchorNotNamed(missing)}\n${USAGE}`)
      return 2
    }
    for (const [what, f, flag] of [['the signer\'s public audit key', key, '--audit-key'], ['the signer\'s signer.db', state, '--signer-db']] as const) {
      if (!existsSync(f)) {
        io.err(`${what} not found at ${f}: run verify on the signer's data directory, or name it with ${flag} (--chain-only checks the hash chain alone)`)
        return 2
      }
    }
    try {
      // Before signer.db: a signature stored after this read has its event after this seq (see AuditAnchor).
      const logSeq = readNewestSeq(file)
      anchor = { ...loadAuditAnchor(key, state), keyFile: key, signerDbFile: state, ...(logSeq === null ? {} : { logSeqBeforeSignatures: logSeq }) }
    } catch (err) {
      if (err instanceof DamagedDatabaseError) {
        // A verdict like the log's own damage (exit 1), not a usage error: the files were found, one is broken.
        io.out(escapeForDisplay(`audit chain BROKEN (${KIND_TEXT.damaged_file}): ${err.problem}`))
        io.out(`audit chain BROKEN: 1 problem (signer.db's latest checkpoint cannot be read, so the log was not walked; --chain-only checks its hash chain alone)`)
        return 1
      }
      io.err(escapeForDisplay(`cannot read the audit anchor (${key}, ${state}): ${(err as Error).message}`))
      return 2
    }
  }
  try {
    return command === 'verify' ? verify(file, anchor, io) : tail(file, n, io)
  } catch (err) {
    // Not an audit log, unreadable, or corrupt beyond SQL: say so, no stack trace.
    // SQLite's message can quote the file's own names: escaped like every line from file data.
    io.err(escapeForDisplay(`cannot read audit log at ${file}: ${(err as Error).message}`))
    return 2
  }
}

/** The anchor verify checked against, and the files it came from (named in the OK line). */
interface CheckedAnchor extends AuditAnchor {
  keyFile: string
  signerDbFile: string
}

function verify(file: string, anchor: CheckedAnchor | undefined, io: Io): number {
  const result = verifyAuditChain(file, anchor)
  if (result.ok) {
    if (!anchor) {
      io.out(`audit chain OK: ${result.rows} events (hash chain only: checkpoints and truncation not checked)`)
      return 0
    }
    const after = result.rows - result.lastCheckpointSeq
    const last = result.lastCheckpointSeq > 0 ? `the last at seq ${result.lastCheckpointSeq}, ${after} events after it not yet covered` : 'none yet'
    // Which key vouched for the log, by the fingerprint checkpoint rows name it with.
    const signatures = anchor.signatures ? ` and ${anchor.signatures.byKey.size} ${anchor.signatures.byKey.size === 1 ? 'signature' : 'signatures'}` : ''
    const checkedWith = `checked with audit key ${auditKeyFingerprint(anchor.publicKey)} (${anchor.keyFile}) and the latest checkpoint${signatures} in ${anchor.signerDbFile}`
    io.out(`audit chain OK: ${result.rows} events, ${result.checkpoints} signed checkpoints (${last}); ${checkedWith}${reanchored(result.reanchors)}`)
    return 0
  }
  // One line a problem, each complete in itself (for grep and alerts), then how many in all.
  // Problems quote the file (names, SQL, hashes): escaped again here, so that
  // no text from audit.db reaches the terminal raw, whichever check made it.
  for (const p of result.problems) io.out(escapeForDisplay(`audit chain BROKEN${p.seq === null ? '' : ` at seq ${p.seq}`} (${KIND_TEXT[p.kind]}): ${p.problem}`))
  const unlisted = result.problemCount > result.problems.length ? ` (the first ${result.problems.length} are listed)` : ''
  // A damaged file is not walked to its end: "in 0 events" would read as an empty log.
  const damaged = result.problems.some((p) => p.kind === 'damaged_file')
  const scope = damaged ? `in a damaged file (${result.rows} events read)` : `in ${result.rows} events`
  io.out(`audit chain BROKEN: ${result.problemCount} ${result.problemCount === 1 ? 'problem' : 'problems'} ${scope}${unlisted}`)
  return 1
}

/** The newest `n` events, oldest of them first (like tail), one JSON object a line. */
function tail(file: string, n: number, io: Io): number {
  assertDatabaseFile(file)
  const handle = new Database(file, { readonly: true, fileMustExist: true })
  try {
    // A view named audit_events could return rows without end, and its newest never (see auditTableProblem).
    const tableProblem = auditTableProblem(readSchema(handle))
    if (tableProblem !== null) throw new Error(`${tableProblem} (its rows were not read)`)
    const rows = handle.prepare<[number], AuditRow>('SELECT * FROM audit_events ORDER BY seq DESC LIMIT ?').all(n)
    // JSON.stringify leaves DEL, C1 (U+009B opens a terminal escape) and bidi characters raw.
    for (const r of rows.reverse()) io.out(escapeJsonForDisplay(JSON.stringify({ seq: r.seq, ...toShownEvent(r) })))
  } finally {
    handle.close()
  }
  return 0
}

// Run when executed (also through the npm bin symlink), not when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  process.exitCode = runAuditCli(process.argv.slice(2), {
    out: (s) => process.stdout.write(s + '\n'),
    err: (s) => process.stderr.write(s + '\n'),
    env: process.env,
  })
}

/** The seq of the latest checkpoint signer.db records, or null when there is none or the files cannot be read. */
function recordedCheckpointSeq(keyFile: string, signerDbFile: string): number | null {
  if (!existsSync(keyFile) || !existsSync(signerDbFile)) return null
  try {
    return loadAuditAnchor(keyFile, signerDbFile, { signatures: false }).latest?.seq ?? null
  } catch {
    return null
  }
}
