import { readFileSync, statSync } from 'node:fs'

export class PassphraseError extends Error {
  override name = 'PassphraseError'
}

export interface PassphraseIo {
  env: Record<string, string | undefined>
  stdin: NodeJS.ReadStream
  stderr: NodeJS.WritableStream
}

/**
 * The keystore passphrase, from (in order) SERVICE_DEMO_PASSPHRASE, the file
 * named by SERVICE_PASSPHRASE_FILE (refused when group or others may read
 * it), or a prompt without echo when stdin is a terminal.
 */
export async function resolvePassphrase(io: PassphraseIo, prompt = 'keystore passphrase: '): Promise<string> {
  const fromEnv = io.env.SERVICE_DEMO_PASSPHRASE
  if (fromEnv) return fromEnv
  const file = io.env.SERVICE_PASSPHRASE_FILE
  if (file) return readPassphraseFile(file)
  if (io.stdin.isTTY) return promptHidden(io, prompt)
  throw new PassphraseError(
    'no keystore passphrase: set SERVICE_PASSPHRASE_FILE to a file of mode 0600 (or SERVICE_DEMO_PASSPHRASE), or run on a terminal to be asked',
  )
}

export function readPassphraseFile(file: string): string {
  let mode: number
  try {
    mode = statSync(file).mode
  } catch (err) {
    throw new PassphraseError(`cannot read SERVICE_PASSPHRASE_FILE ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  if ((mode & 0o077) !== 0) {
    throw new PassphraseError(`SERVICE_PASSPHRASE_FILE ${file} is readable by group or others (mode ${(mode & 0o777).toString(8)}); chmod 600 it`)
  }
  const text = readFileSync(file, 'utf8').replace(/\r?\n$/, '')
  if (text.length === 0) throw new PassphraseError(`SERVICE_PASSPHRASE_FILE ${file} is empty`)
  return text
}

export function promptHidden(io: Pick<PassphraseIo, 'stdin' | 'stderr'>, prompt: string): Promise<string> {
  const { stdin, stderr } = io
  return new Promise((resolve, reject) => {
    stderr.write(prompt)
    let value = ''
    stdin.setRawMode?.(true)
    stdin.resume()
    stdin.setEncoding('utf8')
    const done = (err?: Error) => {
      stdin.setRawMode?.(false)
      stdin.pause()
      stdin.off('data', onData)
      stderr.write('\n')
      if (err) reject(err)
      else resolve(value)
    }
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done()
        if (ch === '\u0003') return done(new PassphraseError('cancelled'))
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
        else value += ch
      }
    }
    stdin.on('data', onData)
  })
}
