#!/usr/bin/env node
import { existsSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import Database from 'better-sqlite3'
import { toEvent } from './auditLog.js'
import type { AuditRow } from './schema.js'
import { verifyAuditChain } from './verify.js'

const USAGE = `usage: countersign-audit verify [--data-dir DIR | --db FILE]
       countersign-audit tail [-n N] [--data-dir DIR | --db FILE]`

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
  let dataDir = io.env.SERVICE_DATA_DIR || 'data'
  let n = 20
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i]
    const value = rest[i + 1]
    if ((flag === '--data-dir' || flag === '--db' || flag === '-n') && value === undefined) {
      io.err(`${flag} needs a value\n${USAGE}`)
      return 2
    }
    if (flag === '--data-dir') dataDir = value!
    else if (flag === '--db') db = value!
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
  const file = db ?? path.join(dataDir, 'audit.db')
  if (command !== 'verify' && command !== 'tail') {
    io.err(USAGE)
    return 2
  }
  if (!existsSync(file)) {
    io.err(`no audit log at ${file}`)
    return 2
  }
  try {
    return command === 'verify' ? verify(file, io) : tail(file, n, io)
  } catch (err) {
    // Not an audit log, unreadable, or corrupt beyond SQL: say so, no stack trace.
    io.err(`cannot read audit log at ${file}: ${(err as Error).message}`)
    return 2
  }
}

function verify(file: string, io: Io): number {
  const result = verifyAuditChain(file)
  if (result.ok) {
    io.out(`audit chain OK: ${result.rows} events`)
    return 0
  }
  io.out(`audit chain BROKEN at seq ${result.firstBadSeq}: ${result.problem} (${result.rows} events verified before it)`)
  return 1
}

/** The newest `n` events, oldest of them first (like tail), one JSON object a line. */
function tail(file: string, n: number, io: Io): number {
  const handle = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const rows = handle.prepare<[number], AuditRow>('SELECT * FROM audit_events ORDER BY seq DESC LIMIT ?').all(n)
    for (const r of rows.reverse()) io.out(JSON.stringify({ seq: r.seq, ...toEvent(r) }))
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
