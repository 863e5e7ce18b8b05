import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { OperatorError, readSecretFile, readVariable } from '@countersign/shared'

export class PassphraseError extends OperatorError {
  override name = 'PassphraseError'
}

/** A readable that may be a terminal (process.stdin is one). */
export type InputStream = Readable & { isTTY?: boolean; isRaw?: boolean; setRawMode?: (raw: boolean) => unknown }

export interface PassphraseIo {
  env: Record<string, string | undefined>
  stdin: InputStream
  stderr: NodeJS.WritableStream
}

export const HOW_TO_GIVE_A_PASSPHRASE =
  'set SERVICE_PASSPHRASE_FILE to a file holding it (mode 0600 or stricter), or SERVICE_DEMO_PASSPHRASE, or run on a terminal to be asked'

/** A passphrase from the configuration, and where it came from, as an error message names it. */
export interface ConfiguredPassphrase {
  passphrase: string
  source: string
}

/**
 * The configured non-interactive source, if any, and which it is:
 * SERVICE_DEMO_PASSPHRASE (taken exactly as given: spaces at either end are
 * part of a passphrase), else SERVICE_PASSPHRASE_FILE (read through its
 * config reader). A blank SERVICE_DEMO_PASSPHRASE is unset, as every blank
 * value is in the configuration: a stray space would otherwise seal keys
 * with " " (found by review). Both set is refused rather than one silently
 * winning: the operator could not tell which passphrase sealed the keys.
 */
export function configuredPassphraseSource(env: PassphraseIo['env']): ConfiguredPassphrase | null {
  const demo = env.SERVICE_DEMO_PASSPHRASE
  const demoSet = demo !== undefined && demo.trim() !== ''
  if (demoSet && env.SERVICE_PASSPHRASE_FILE?.trim()) {
    throw new PassphraseError(
      'SERVICE_DEMO_PASSPHRASE and SERVICE_PASSPHRASE_FILE are both set: unset one of them (keep SERVICE_PASSPHRASE_FILE, a file of mode 0600, for anything but a demo)',
    )
  }
  if (demoSet) return { passphrase: demo, source: 'SERVICE_DEMO_PASSPHRASE' }
  const file = readVariable(env, 'SERVICE_PASSPHRASE_FILE')
  return file ? { passphrase: readPassphraseFile(file, env), source: `SERVICE_PASSPHRASE_FILE (${file})` } : null
}

/** The configured passphrase alone (configuredPassphraseSource without the source). */
export function configuredPassphrase(env: PassphraseIo['env']): string | null {
  return configuredPassphraseSource(env)?.passphrase ?? null
}

/**
 * The keystore passphrase, from (in order) SERVICE_DEMO_PASSPHRASE, the file
 * named by SERVICE_PASSPHRASE_FILE, or a prompt without echo when stdin is a
 * terminal; otherwise a PassphraseError saying how to give one.
 */
export async function resolvePassphrase(io: PassphraseIo, prompt = 'keystore passphrase: '): Promise<string> {
  const configured = configuredPassphrase(io.env)
  if (configured !== null) return configured
  if (io.stdin.isTTY) return promptHidden(io, prompt)
  throw new PassphraseError(`no keystore passphrase: ${HOW_TO_GIVE_A_PASSPHRASE}`)
}

const MAX_PASSPHRASE_FILE_BYTES = 4096

/**
 * Reads a passphrase (or PIN) file through the shared secret-file checks
 * (regular file, 0600, size cap, systemd credentials). One trailing newline
 * (LF or CRLF) is dropped; nothing else is trimmed.
 */
export function readPassphraseFile(file: string, env: Record<string, string | undefined> = process.env, variable = 'SERVICE_PASSPHRASE_FILE'): string {
  const text = readSecretFile(file, { variable, maxBytes: MAX_PASSPHRASE_FILE_BYTES, env, refuse: (message) => new PassphraseError(message) }).replace(/\r?\n$/, '')
  if (text.length === 0) throw new PassphraseError(`${variable} ${file} is empty`)
  return text
}

/**
 * Reads one line from a terminal without echo (raw mode) until Enter.
 * Backspace and Ctrl-U edit; Ctrl-C and Ctrl-D cancel. Restores the
 * terminal's mode afterwards.
 */
export function promptHidden(io: Pick<PassphraseIo, 'stdin' | 'stderr'>, prompt: string): Promise<string> {
  const { stdin, stderr } = io
  if (!stdin.isTTY || !stdin.setRawMode) return Promise.reject(new PassphraseError('cannot prompt: stdin is not a terminal'))
  const setRawMode = stdin.setRawMode.bind(stdin)
  return new Promise((resolve, reject) => {
    const decoder = new StringDecoder('utf8')
    const wasRaw = stdin.isRaw === true
    let chars: string[] = []
    const finish = (err: Error | null) => {
      stdin.off('data', onData)
      stdin.off('end', onEnd)
      stdin.off('error', onError)
      setRawMode(wasRaw)
      stdin.pause()
      stderr.write('\n')
      const value = chars.join('')
      chars = []
      if (err) reject(err)
      else resolve(value)
    }
    const onData = (chunk: Buffer | string) => {
      const text = typeof chunk === 'string' ? chunk : decoder.write(chunk)
      for (const ch of text) {
        if (ch === '\r' || ch === '\n') return finish(null)
        if (ch === '\u0003' || ch === '\u0004') return finish(new PassphraseError('cancelled'))
        if (ch === '\u007f' || ch === '\b') chars.pop()
        else if (ch === '\u0015') chars = []
        else if (ch >= ' ') chars.push(ch)
      }
    }
    const onEnd = () => finish(new PassphraseError('stdin closed before a passphrase was entered'))
    const onError = (err: Error) => finish(err)
    stderr.write(prompt)
    setRawMode(true)
    stdin.on('data', onData)
    stdin.once('end', onEnd)
    stdin.once('error', onError)
    stdin.resume()
  })
}
