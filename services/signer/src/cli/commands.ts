import { generatePrivateKey } from 'viem/accounts'
import { KeystoreError } from '../keystore/errors.js'
import type { ScryptParams } from '../keystore/format.js'
import { addressOfPrivateKey, type KeyEntry, type Keystore } from '../keystore/keystore.js'
import { configuredPassphrase, configuredPassphraseSource, HOW_TO_GIVE_A_PASSPHRASE, PassphraseError, promptHidden, resolvePassphrase, type PassphraseIo } from '../keystore/passphrase.js'
import { UsageError } from './args.js'
import { derivationPath, deriveFromMnemonic, mnemonicProblem, normalizeMnemonic } from './mnemonic.js'
import { readSecret } from './secretInput.js'

export interface KeysIo extends PassphraseIo {
  stdout: NodeJS.WritableStream
}

export interface CommandContext {
  keystore: Keystore
  io: KeysIo
  /** In-process callers (tests) only: cheaper scrypt parameters. Never settable from argv or env. */
  scrypt?: ScryptParams
}

/** What a command that adds a key returns: enough to audit it, and no key material. */
export interface KeyAdded {
  address: string
  label: string | null
  source: 'generated' | 'private_key' | 'mnemonic'
  /** Where the key lives; absent: the keystore. */
  backend?: 'pkcs11'
  /** For mnemonic imports: m/44'/60'/account'/0/index. */
  derivationPath?: string
  file: string
}

export const MIN_NEW_PASSPHRASE_LENGTH = 8

/**
 * Why `passphrase` may not seal a new key, or null. The same minimum for
 * every source (terminal, SERVICE_DEMO_PASSPHRASE, SERVICE_PASSPHRASE_FILE):
 * before, only the prompt had one, and a one-character file sealed keys
 * (found by review). Only new keys: unlocking keys already sealed with a
 * shorter passphrase (the signer, reseal) is never refused. Counted in
 * characters, not UTF-16 units. The message gives the length, never the text.
 */
export function newPassphraseProblem(passphrase: string, source: string): string | null {
  const length = Array.from(passphrase).length
  if (length >= MIN_NEW_PASSPHRASE_LENGTH) return null
  return `${source} holds a passphrase of ${length} character${length === 1 ? '' : 's'}; a new key needs one of at least ${MIN_NEW_PASSPHRASE_LENGTH} characters (keys already sealed with a shorter one still unlock, but no new key is sealed with it)`
}

/**
 * The passphrase for a new key: SERVICE_DEMO_PASSPHRASE or
 * SERVICE_PASSPHRASE_FILE, else asked twice on a terminal. When stdin carries
 * the secret it cannot also carry the passphrase, and the error says so. The
 * signer unlocks every key with one passphrase, so one that does not open the
 * keys already there is refused.
 */
export async function passphraseForNewKey(ctx: CommandContext, stdinCarriesSecret: boolean): Promise<string> {
  const { io, keystore } = ctx
  const configured = configuredPassphraseSource(io.env)
  const configuredProblem = configured && newPassphraseProblem(configured.passphrase, configured.source)
  if (configuredProblem) throw new PassphraseError(configuredProblem)
  let passphrase = configured?.passphrase ?? null
  if (passphrase === null) {
    if (!io.stdin.isTTY) {
      throw new PassphraseError(
        stdinCarriesSecret
          ? 'no keystore passphrase: stdin carries the key, so the passphrase must come from SERVICE_PASSPHRASE_FILE (a file of mode 0600) or SERVICE_DEMO_PASSPHRASE'
          : `no keystore passphrase: ${HOW_TO_GIVE_A_PASSPHRASE}`,
      )
    }
    const first = await promptHidden(io, 'keystore passphrase: ')
    if (newPassphraseProblem(first, 'the terminal')) throw new PassphraseError(`use a passphrase of at least ${MIN_NEW_PASSPHRASE_LENGTH} characters`)
    const second = await promptHidden(io, 'repeat the passphrase: ')
    if (first !== second) throw new PassphraseError('the two passphrases differ')
    passphrase = first
  }
  if (!(await keystore.passphraseOpensExistingKeys(passphrase))) {
    throw new KeystoreError(
      `this passphrase does not open the keys already in ${keystore.dir}; the signer unlocks every key with one passphrase, so use the same one`,
    )
  }
  return passphrase
}

/** Fails before any passphrase is asked or any key derived when a piped stdin leaves no passphrase source. */
function requirePassphraseSourceForPipedSecret(io: KeysIo): void {
  if (!io.stdin.isTTY && configuredPassphrase(io.env) === null) {
    throw new PassphraseError(
      'no keystore passphrase: stdin carries the key, so the passphrase must come from SERVICE_PASSPHRASE_FILE (a file of mode 0600) or SERVICE_DEMO_PASSPHRASE',
    )
  }
}

function refuseExisting(keystore: Keystore, address: string): void {
  const existing = keystore.find(address)
  if (existing) throw new KeystoreError(`a key for ${address} already exists (${existing.file})`)
}

const withLabel = (label: string | undefined) => (label === undefined ? {} : { label })

export async function generateKey(ctx: CommandContext, opts: { label?: string }): Promise<KeyAdded> {
  const passphrase = await passphraseForNewKey(ctx, false)
  const entry = await ctx.keystore.save(generatePrivateKey(), passphrase, { ...withLabel(opts.label), ...scrypt(ctx) })
  return added(entry, 'generated')
}

/** Imports one 0x-hex (or bare hex) private key read from stdin. */
export async function importKey(ctx: CommandContext, opts: { label?: string }): Promise<KeyAdded> {
  requirePassphraseSourceForPipedSecret(ctx.io)
  const text = await readSecret(ctx.io, 'private key (0x…)')
  const privateKey = text.startsWith('0x') || text.startsWith('0X') ? `0x${text.slice(2)}` : `0x${text}`
  if (!/^0x[0-9a-fA-F]{64}$/.test(privateKey)) throw new UsageError('stdin must hold one private key: 64 hex characters, with or without 0x')
  const address = addressOfPrivateKey(privateKey)
  refuseExisting(ctx.keystore, address)
  const passphrase = await passphraseForNewKey(ctx, !ctx.io.stdin.isTTY)
  const entry = await ctx.keystore.save(privateKey, passphrase, { ...withLabel(opts.label), ...scrypt(ctx) })
  return added(entry, 'private_key')
}

/** Imports m/44'/60'/account'/0/index of an English BIP-39 mnemonic read from stdin (no BIP-39 passphrase). */
export async function importMnemonic(ctx: CommandContext, opts: { label?: string; account: number; index: number }): Promise<KeyAdded> {
  requirePassphraseSourceForPipedSecret(ctx.io)
  const mnemonic = normalizeMnemonic(await readSecret(ctx.io, 'mnemonic'))
  const problem = mnemonicProblem(mnemonic)
  if (problem) throw new UsageError(`stdin must hold a valid English BIP-39 mnemonic: ${problem}`)
  const derived = deriveFromMnemonic(mnemonic, opts.account, opts.index)
  try {
    refuseExisting(ctx.keystore, derived.address)
    const passphrase = await passphraseForNewKey(ctx, !ctx.io.stdin.isTTY)
    const entry = await ctx.keystore.save(derived.privateKey, passphrase, { ...withLabel(opts.label), ...scrypt(ctx) })
    return { ...added(entry, 'mnemonic'), derivationPath: derivationPath(opts.account, opts.index) }
  } finally {
    derived.wipe()
  }
}

/**
 * `reseal`: rewrites every version 1 key file as version 2, whose dev flag
 * and label are sealed with the key, keeping each key's header as it is. The
 * passphrase must open the keys (SERVICE_PASSPHRASE_FILE,
 * SERVICE_DEMO_PASSPHRASE, or asked once on a terminal).
 */
export async function resealKeys(ctx: CommandContext): Promise<KeyEntry[]> {
  if (ctx.keystore.list().every((k) => k.version !== 1)) return []
  const passphrase = await resolvePassphrase(ctx.io)
  return ctx.keystore.reseal(passphrase, scrypt(ctx))
}

export function listKeys(ctx: Pick<CommandContext, 'keystore'>): KeyEntry[] {
  return ctx.keystore.list()
}

const scrypt = (ctx: CommandContext) => (ctx.scrypt ? { scrypt: ctx.scrypt } : {})

const added = (entry: KeyEntry, source: KeyAdded['source']): KeyAdded => ({ address: entry.address, label: entry.label, source, file: entry.file })
