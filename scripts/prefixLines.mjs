// The launcher's output: each line of a process prefixed with its name.
import { StringDecoder } from 'node:string_decoder'

/**
 * Copies `stream` to `out`, each line prefixed with `label | `. A line that
 * stays incomplete for `partialMs` is written as far as it goes: a prompt
 * such as the signer's "keystore passphrase: " ends without a newline and
 * then waits for the operator, so holding it back until a newline comes
 * would leave the operator with no prompt at all. The rest of such a line
 * follows it without a second prefix.
 * @param {string} label
 * @param {NodeJS.ReadableStream} stream
 * @param {{ write(text: string): unknown }} out
 * @param {number} [partialMs]
 * @returns {void}
 */
export function prefixLines(label, stream, out, partialMs = 100) {
  let held = ''
  // The current line's start (with its prefix) was already written.
  let midLine = false
  /** @type {NodeJS.Timeout | null} */
  let timer = null
  // A child's pipe hands over bytes: a character whose bytes straddle two
  // chunks is held back until it is whole, not decoded as two U+FFFD.
  const decoder = new StringDecoder('utf8')
  const head = () => (midLine ? '' : `${label} | `)
  const writePartial = () => {
    timer = null
    if (held === '') return
    out.write(head() + held)
    midLine = true
    held = ''
  }
  stream.on('data', (/** @type {string | Buffer} */ chunk) => {
    held += typeof chunk === 'string' ? chunk : decoder.write(chunk)
    let nl
    while ((nl = held.indexOf('\n')) !== -1) {
      out.write(`${head()}${held.slice(0, nl)}\n`)
      midLine = false
      held = held.slice(nl + 1)
    }
    if (timer) clearTimeout(timer)
    timer = held === '' ? null : setTimeout(writePartial, partialMs)
  })
  stream.on('end', () => {
    if (timer) clearTimeout(timer)
    held += decoder.end()
    writePartial()
    if (midLine) out.write('\n')
  })
}
