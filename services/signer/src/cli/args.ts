import { english } from 'viem/accounts'
import { OperatorError } from '@countersign/shared'

export class UsageError extends OperatorError {
  override name = 'UsageError'
}

const WORDS = new Set(english)

/**
 * Why argv looks like it carries a secret, or null. Secrets on the command
 * line end up in `ps` and shell history, so they are refused before anything
 * else runs: 64 hex characters anywhere in an argument (a private key), an
 * argument of 12 or more words, or 12 or more arguments that are BIP-39 words
 * (an unquoted mnemonic). The reason never quotes the argument.
 */
export function secretInArgv(argv: readonly string[]): string | null {
  if (argv.some((a) => /[0-9a-fA-F]{64}/.test(a))) return 'an argument looks like a private key'
  if (argv.some((a) => a.trim().split(/\s+/).length >= 12)) return 'an argument looks like a mnemonic'
  if (argv.filter((a) => WORDS.has(a.toLowerCase())).length >= 12) return 'the arguments look like a mnemonic'
  return null
}

/**
 * `--name value` and `--name=value` options, each at most once, only the
 * allowed names; a name in `flags` takes no value (`--yes`) and maps to ''.
 */
export function parseOptions(args: readonly string[], allowed: readonly string[], flags: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {}
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument #${i + 2}: options are --name value`)
    const eq = arg.indexOf('=')
    const name = arg.slice(2, eq === -1 ? undefined : eq)
    if (!allowed.includes(name)) {
      const printable = /^[a-z][a-z-]{0,30}$/.test(name) ? `--${name}` : `#${i + 2}`
      throw new UsageError(`unknown option ${printable}${allowed.length ? ` (this command takes ${allowed.map((a) => `--${a}`).join(', ')})` : ''}`)
    }
    if (name in out) throw new UsageError(`--${name} is given twice`)
    if (flags.includes(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`)
      out[name] = ''
      continue
    }
    let value: string | undefined
    if (eq !== -1) value = arg.slice(eq + 1)
    else value = args[++i]
    if (value === undefined) throw new UsageError(`--${name} needs a value`)
    out[name] = value
  }
  return out
}

/** A BIP-32 index below the hardened range, default 0. */
export function parseIndex(raw: string | undefined, flag: string): number {
  if (raw === undefined) return 0
  if (!/^(0|[1-9][0-9]{0,9})$/.test(raw) || Number(raw) > 2 ** 31 - 1) throw new UsageError(`${flag} must be an integer from 0 to 2147483647`)
  return Number(raw)
}
