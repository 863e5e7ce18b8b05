// The launcher's prefixed output (scripts/start.mjs): complete lines get the
// process's name, and a prompt that ends without a newline is still shown.
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { prefixLines } from '../scripts/prefixLines.mjs'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function capture() {
  let text = ''
  return { out: { write: (s: string) => void (text += s) }, text: () => text }
}

describe('prefixLines', () => {
  it('prefixes each complete line, also lines split across chunks', () => {
    const input = new PassThrough()
    const { out, text } = capture()
    prefixLines('gateway', input, out)
    input.write('one\ntw')
    input.write('o\nthree\n')
    expect(text()).toBe('gateway | one\ngateway | two\ngateway | three\n')
  })

  it("shows a prompt that ends without a newline (the signer's keystore passphrase), and the rest of its line unprefixed", async () => {
    const input = new PassThrough()
    const { out, text } = capture()
    prefixLines('signer', input, out, 20)
    input.write('keystore passphrase: ')
    await sleep(100)
    expect(text()).toBe('signer | keystore passphrase: ')
    input.write('\n{"msg":"keystore unlocked"}\n')
    expect(text()).toBe('signer | keystore passphrase: \nsigner | {"msg":"keystore unlocked"}\n')
  })

  it('ends an unfinished last line when the stream ends', async () => {
    const input = new PassThrough()
    const { out, text } = capture()
    prefixLines('approver', input, out, 1000)
    input.end('bye')
    await sleep(20)
    expect(text()).toBe('approver | bye\n')
  })

  it('keeps a character whose UTF-8 bytes straddle two chunks whole (a pipe hands over bytes)', () => {
    const input = new PassThrough()
    const { out, text } = capture()
    prefixLines('gateway', input, out)
    const bytes = Buffer.from('café …\n')
    input.write(bytes.subarray(0, 4))
    input.write(bytes.subarray(4, 8))
    input.write(bytes.subarray(8))
    expect(text()).toBe('gateway | café …\n')
  })
})
