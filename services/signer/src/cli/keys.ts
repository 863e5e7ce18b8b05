#!/usr/bin/env node
import { realpathSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { bytesToHex } from '@noble/hashes/utils.js'
import { generatePrivateKey, mnemonicToAccount } from 'viem/accounts'
import { openAuditLog } from '@countersign/shared'
import { Keystore } from '../keystore/keystore.js'
import { promptHidden, resolvePassphrase, type PassphraseIo } from '../keystore/passphrase.js'

const USAGE = `usage: countersign-keys <command> [options]

  generate [--label L]                          create a new key
  import [--label L]                            import a 0x-hex private key read from stdin
  import-mnemonic [--account N] [--index N] [--label L]
                                                import m/44'/60'/N'/0/I from a BIP-39 mnemonic read from stdin
  list                                          list keys (address, label, dev)

options: --data-dir DIR (default: SERVICE_DATA_DIR or ./data); the keystore is DIR/keystore.
The passphrase comes from SERVICE_PASSPHRASE_FILE or SERVICE_DEMO_PASSPHRASE, or is asked on a terminal.
Secrets are never taken from the command line.`

export interface KeysIo extends PassphraseIo {
  stdout: NodeJS.WritableStream
}

export class UsageError extends Error {}

function parseArgs(args: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument "${a.length > 12 ? a.slice(0, 6) + '…' : a}"`)
    const v = args[i + 1]
    if (v === undefined) throw new UsageError(`${a} needs a value`)
    out[a.slice(2)] = v
    i++
  }
  return out
}

async function readStdin(stdin: AsyncIterable<string | Buffer>): Promise<string> {
  let text = ''
  for await (const chunk of stdin) text += chunk.toString()
  return text.trim()
}

async function secretFromStdin(io: KeysIo, what: string): Promise<string> {
  if (io.stdin.isTTY) return (await promptHidden(io, `${what}: `)).trim()
  return readStdin(io.stdin)
}

async function newPassphrase(io: KeysIo): Promise<string> {
  if (io.env.SERVICE_DEMO_PASSPHRASE || io.env.SERVICE_PASSPHRASE_FILE || !io.stdin.isTTY) return resolvePassphrase(io)
  const first = await promptHidden(io, 'new keystore passphrase: ')
  const second = await promptHidden(io, 'repeat passphrase: ')
  if (first !== second) throw new UsageError('the passphrases differ')
  if (first.length < 8) throw new UsageError('use a passphrase of at least 8 characters')
  return first
}

/** Runs one command; returns the exit code. Secrets never reach argv, stdout or the audit log. */
export async function runKeysCli(argv: string[], io: KeysIo): Promise<number> {
  const [command, ...rest] = argv
  try {
    if (rest.some((a) => /^(0x)?[0-9a-fA-F]{64}$/.test(a) || a.trim().split(/\s+/).length >= 12)) {
      throw new UsageError('refusing a secret on the command line (it would be visible in ps and shell history); pipe it to stdin')
    }
    const opts = parseArgs(rest)
    const dataDir = path.resolve(opts['data-dir'] ?? (io.env.SERVICE_DATA_DIR || 'data'))
    const keystore = new Keystore(path.join(dataDir, 'keystore'))
    const label = opts.label
    const audited = async (event: string, data: Record<string, unknown>) => {
      keystore.ensureDir()
      const audit = openAuditLog(path.join(dataDir, 'audit.db'))
      try {
        await audit.append({ intentId: 'system', event, data })
      } finally {
        await audit.close()
      }
    }
    switch (command) {
      case 'list': {
        const keys = keystore.list()
        if (keys.length === 0) io.stdout.write(`no keys in ${keystore.dir}\n`)
        for (const k of keys) io.stdout.write(`${k.address}  ${k.label ?? '-'}${k.dev ? '  (dev)' : ''}\n`)
        return 0
      }
      case 'generate': {
        const passphrase = await newPassphrase(io)
        const entry = await keystore.save(generatePrivateKey(), passphrase, label ? { label } : {})
        await audited('key_generated', { address: entry.address, label: entry.label })
        io.stdout.write(`${entry.address}\n`)
        return 0
      }
      case 'import': {
        const secret = await secretFromStdin(io, 'private key (0x…)')
        const normalised = secret.startsWith('0x') ? secret : `0x${secret}`
        if (!/^0x[0-9a-fA-F]{64}$/.test(normalised)) throw new UsageError('stdin must hold one private key: 64 hex characters, with or without 0x')
        const passphrase = await newPassphrase(io)
        const entry = await keystore.save(normalised, passphrase, label ? { label } : {})
        await audited('key_imported', { address: entry.address, label: entry.label, source: 'private_key' })
        io.stdout.write(`${entry.address}\n`)
        return 0
      }
      case 'import-mnemonic': {
        const accountIndex = index(opts.account, '--account')
        const addressIndex = index(opts.index, '--index')
        const mnemonic = (await secretFromStdin(io, 'mnemonic')).split(/\s+/).join(' ')
        let account
        try {
          account = mnemonicToAccount(mnemonic, { accountIndex, addressIndex })
        } catch {
          throw new UsageError('stdin must hold a valid BIP-39 mnemonic (English word list)')
        }
        const hdKey = account.getHdKey()
        if (!hdKey.privateKey) throw new UsageError('the mnemonic did not yield a private key')
        const privateKey = `0x${bytesToHex(hdKey.privateKey)}`
        const passphrase = await newPassphrase(io)
        const entry = await keystore.save(privateKey, passphrase, label ? { label } : {})
        await audited('key_imported', { address: entry.address, label: entry.label, source: 'mnemonic', path: `m/44'/60'/${accountIndex}'/0/${addressIndex}` })
        io.stdout.write(`${entry.address}\n`)
        return 0
      }
      default:
        io.stderr.write(`${USAGE}\n`)
        return 2
    }
  } catch (err) {
    io.stderr.write(`countersign-keys: ${(err as Error).message}\n`)
    return err instanceof UsageError ? 2 : 1
  }
}

function index(raw: string | undefined, flag: string): number {
  if (raw === undefined) return 0
  if (!/^[0-9]{1,9}$/.test(raw)) throw new UsageError(`${flag} must be a non-negative integer`)
  return Number(raw)
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  runKeysCli(process.argv.slice(2), { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }).then(
    (code) => process.exit(code),
  )
}
