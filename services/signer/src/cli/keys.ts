#!/usr/bin/env node
import path from 'node:path'
import { OperatorError, dataDirOption, makePrivateDir, readDataDir } from '@countersign/shared'
import { printableLabel, type ScryptParams } from '../keystore/format.js'
import { Keystore, type KeyEntry } from '../keystore/keystore.js'
import { parseIndex, parseOptions, secretInArgv, UsageError } from './args.js'
import { generateKey, importKey, importMnemonic, listKeys, resealKeys, type CommandContext, type KeyAdded, type KeysIo } from './commands.js'
import { hsmGenerate, hsmList, tokenWarningLine } from './hsmCommands.js'
import { auditKeyAdded, auditKeysResealed } from './keyAudit.js'
import { pkcs11ConfigFrom } from '../config.js'
import { isMainModule } from './isMain.js'

export type { KeyAdded, KeysIo } from './commands.js'

export const USAGE = `usage: countersign-keys <command> [options]

  generate [--label L]                   create a new key
  import [--label L]                     import a private key (0x + 64 hex) read from stdin
  import-mnemonic [--account N] [--index N] [--label L]
                                         import m/44'/60'/N'/0/I of a BIP-39 mnemonic read from stdin
  list                                   list keys: address, label, backend (keystore or pkcs11), dev
  reseal                                 rewrite version 1 key files as version 2 (dev flag and label
                                         sealed with the key); the signer refuses version 1 files
  hsm-generate --label L                 create a secp256k1 key on the PKCS#11 token; it never leaves the token
  hsm-list                               list the PKCS#11 token's keys: address, label

Every command takes --data-dir DIR (default: SERVICE_DATA_DIR, else ./data);
the keystore is DIR/keystore; commands that add or reseal keys create DIR
(0700) and refuse a link or another user's directory, as the signer does. The
passphrase comes from SERVICE_PASSPHRASE_FILE (mode 0600) or
SERVICE_DEMO_PASSPHRASE (not both), or is asked twice on a terminal; a new
key needs one of at least 8 characters. Keys
and mnemonics are read from stdin only, never from the command line. The hsm-
commands, and list for token keys, use the signer's SERVICE_PKCS11_MODULE,
SERVICE_PKCS11_TOKEN_LABEL and SERVICE_PKCS11_PIN_FILE (mode 0600).`

const OPTIONS: Record<string, string[]> = {
  generate: ['label', 'data-dir'],
  import: ['label', 'data-dir'],
  'import-mnemonic': ['account', 'index', 'label', 'data-dir'],
  list: ['data-dir'],
  reseal: ['data-dir'],
  'hsm-generate': ['label', 'data-dir'],
  'hsm-list': ['data-dir'],
}

/**
 * Commands that write into the data directory (a key file, audit.db, or a
 * key on the token recorded in audit.db). Before anything else they make
 * the directory as the services do (makePrivateDir: created 0700, never a
 * link or another user's directory). Otherwise hsm-generate on a fresh
 * checkout created the token key and only then failed on the missing
 * audit.db, so running it again made a second key; and keys were written
 * into a directory the signer then refuses (both found by review).
 */
const WRITES_DATA_DIR: ReadonlySet<string> = new Set(['generate', 'import', 'import-mnemonic', 'reseal', 'hsm-generate'])

export interface KeysCliOptions {
  /** Called after a key is saved, e.g. to audit it; a failure is reported and exits 1 (the key stays saved). */
  onKeyAdded?: (added: KeyAdded, where: { dataDir: string }) => Promise<void>
  /** Called after `reseal` rewrote at least one key file, e.g. to audit it; a failure is reported and exits 1 (the files stay resealed). */
  onKeysResealed?: (resealed: readonly KeyEntry[], where: { dataDir: string }) => Promise<void>
  /** In-process callers (tests) only: cheaper scrypt parameters. */
  scrypt?: ScryptParams
}

/** Token objects the signer would not use, reported on stderr so the operator sees them beside the list. */
const warnTo = (io: KeysIo) => (msg: string, fields: Record<string, unknown>) => void io.stderr.write(tokenWarningLine(msg, fields))

/** The data directory: --data-dir, else SERVICE_DATA_DIR, else ./data. */
export const dataDirOf = (opts: Record<string, string>, env: KeysIo['env']): string =>
  opts['data-dir'] !== undefined ? dataDirOption(opts['data-dir']) : readDataDir(env)

/**
 * Runs one `countersign-keys` command; returns the exit code (0 done, 1
 * failed, 2 usage). Prints addresses, never keys. Commands that add a key
 * return `{address, label, …}` to `onKeyAdded`.
 */
export async function runKeysCli(argv: readonly string[], io: KeysIo, options: KeysCliOptions = {}): Promise<number> {
  try {
    const secret = secretInArgv(argv)
    if (secret) throw new UsageError(`refusing a secret on the command line (${secret}; it would be visible in ps and shell history): pipe it to stdin`)
    const [command, ...rest] = argv
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      ;(command === undefined ? io.stderr : io.stdout).write(`${USAGE}\n`)
      return command === undefined ? 2 : 0
    }
    const allowed = OPTIONS[command]
    if (!allowed) throw new UsageError(`unknown command ${/^[a-z-]{1,30}$/.test(command) ? `"${command}"` : ''}\n\n${USAGE}`)
    const opts = parseOptions(rest, allowed)
    const dataDir = dataDirOf(opts, io.env)
    if (WRITES_DATA_DIR.has(command)) makePrivateDir(dataDir)
    const ctx: CommandContext = { keystore: new Keystore(path.join(dataDir, 'keystore')), io, ...(options.scrypt ? { scrypt: options.scrypt } : {}) }
    const label = opts.label === undefined ? {} : { label: opts.label }
    let result: KeyAdded
    switch (command) {
      case 'list': {
        const keys = listKeys(ctx)
        const tokenKeys = pkcs11ConfigFrom(io.env) ? await hsmList(io.env, warnTo(io)) : []
        if (keys.length === 0 && tokenKeys.length === 0) io.stdout.write(`no keys in ${ctx.keystore.dir}\n`)
        // Labels escaped even though both backends refuse control characters: a terminal must never act on one.
        for (const k of keys) io.stdout.write(`${k.address}  ${k.label === null ? '-' : printableLabel(k.label)}  keystore${k.dev ? '  (dev)' : ''}${k.version === 1 ? '  (version 1: run countersign-keys reseal)' : ''}\n`)
        for (const k of tokenKeys) io.stdout.write(`${k.address}  ${printableLabel(k.label)}  pkcs11\n`)
        return 0
      }
      case 'reseal': {
        const resealed = await resealKeys(ctx)
        if (resealed.length === 0) io.stdout.write(`no version 1 key files in ${ctx.keystore.dir}\n`)
        // Each key with its dev flag as now sealed: the operator checks that every dev key still says (dev).
        for (const k of resealed) io.stdout.write(`${k.address}  ${k.label === null ? '-' : printableLabel(k.label)}  resealed${k.dev ? '  (dev)' : ''}\n`)
        if (resealed.length > 0 && options.onKeysResealed) {
          try {
            await options.onKeysResealed(resealed, { dataDir })
          } catch (err) {
            io.stderr.write(`countersign-keys: ${resealed.length} key file(s) were resealed, but recording it failed: ${(err as Error).message}\n`)
            return 1
          }
        }
        return 0
      }
      case 'hsm-list': {
        const tokenKeys = await hsmList(io.env, warnTo(io))
        if (tokenKeys.length === 0) io.stdout.write(`no secp256k1 keys on the token\n`)
        for (const k of tokenKeys) io.stdout.write(`${k.address}  ${printableLabel(k.label)}\n`)
        return 0
      }
      case 'hsm-generate':
        result = await hsmGenerate(io.env, opts.label, warnTo(io))
        break
      case 'generate':
        result = await generateKey(ctx, label)
        break
      case 'import':
        result = await importKey(ctx, label)
        break
      default:
        result = await importMnemonic(ctx, { ...label, account: parseIndex(opts.account, '--account'), index: parseIndex(opts.index, '--index') })
    }
    io.stdout.write(`${result.address}\n`)
    if (options.onKeyAdded) {
      try {
        await options.onKeyAdded(result, { dataDir })
      } catch (err) {
        io.stderr.write(`countersign-keys: the key ${result.address} was saved, but recording it failed: ${(err as Error).message}\n`)
        return 1
      }
    }
    return 0
  } catch (err) {
    io.stderr.write(`countersign-keys: ${describe(err)}\n`)
    return err instanceof UsageError ? 2 : 1
  }
}

/** Our own errors (OperatorError) carry safe sentences; anything else is named but not dumped (no stack). */
function describe(err: unknown): string {
  if (err instanceof OperatorError) return err.message
  const e = err as NodeJS.ErrnoException
  return e?.code ? `${e.message}` : `unexpected error (${e?.name ?? typeof err}): ${e?.message ?? String(err)}`
}

if (isMainModule(import.meta.url)) {
  runKeysCli(process.argv.slice(2), { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }, { onKeyAdded: auditKeyAdded, onKeysResealed: auditKeysResealed }).then(
    (code) => process.exit(code),
  )
}
