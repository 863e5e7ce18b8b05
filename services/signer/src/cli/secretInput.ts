import { promptHidden, type InputStream } from '../keystore/passphrase.js'
import { UsageError } from './args.js'

const MAX_STDIN_BYTES = 4096

/** All of a piped stdin, refusing more than a secret could need. */
export async function readAllStdin(stdin: InputStream): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stdin) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer)
    size += buf.length
    if (size > MAX_STDIN_BYTES) {
      for (const c of chunks) c.fill(0)
      throw new UsageError(`stdin holds more than ${MAX_STDIN_BYTES} bytes; it should hold one secret`)
    }
    chunks.push(buf)
  }
  const all = Buffer.concat(chunks)
  const text = all.toString('utf8')
  all.fill(0)
  for (const c of chunks) c.fill(0)
  return text
}

/** A secret from stdin: asked without echo on a terminal, read to the end when piped. Trimmed. */
export async function readSecret(io: { stdin: InputStream; stderr: NodeJS.WritableStream }, what: string): Promise<string> {
  const text = io.stdin.isTTY ? await promptHidden(io, `${what}: `) : await readAllStdin(io.stdin)
  return text.trim()
}
