import { describe, expect, it } from 'vitest'
import { encodeFrame, FrameDecoder } from './framing.js'

const b = (s: string) => Buffer.from(s)
const byteByByte = (d: FrameDecoder, bytes: Buffer) => [...bytes].flatMap((byte) => d.push(Buffer.from([byte])))

describe('FrameDecoder', () => {
  it('assembles frames fed byte by byte', () => {
    const d = new FrameDecoder()
    expect(byteByByte(d, b('{"a":1}\n[2,"x"]\n'))).toEqual([
      { ok: true, value: { a: 1 } },
      { ok: true, value: [2, 'x'] },
    ])
  })

  it('splits several frames in one chunk and keeps the remainder', () => {
    const d = new FrameDecoder()
    expect(d.push(b('{"a":1}\n{"b":2}\n{"c"'))).toEqual([
      { ok: true, value: { a: 1 } },
      { ok: true, value: { b: 2 } },
    ])
    expect(d.midFrame).toBe(true)
    expect(d.push(b(':3}\n'))).toEqual([{ ok: true, value: { c: 3 } }])
    expect(d.midFrame).toBe(false)
  })

  it('handles a multi-byte character split across chunks, at every split point', () => {
    const bytes = b('{"s":"€😀é"}\n')
    for (let cut = 1; cut < bytes.length; cut++) {
      const d = new FrameDecoder()
      const frames = [...d.push(bytes.subarray(0, cut)), ...d.push(bytes.subarray(cut))]
      expect(frames).toEqual([{ ok: true, value: { s: '€😀é' } }])
    }
    expect(byteByByte(new FrameDecoder(), bytes)).toEqual([{ ok: true, value: { s: '€😀é' } }])
  })

  it('measures the limit in bytes: a frame of exactly the limit passes, one byte more does not', () => {
    const atLimit = '{"s":"€€"}' // 14 bytes, 10 characters
    expect(Buffer.byteLength(atLimit)).toBe(14)
    expect(new FrameDecoder(14).push(b(`${atLimit}\n`))).toEqual([{ ok: true, value: { s: '€€' } }])
    expect(new FrameDecoder(13).push(b(`${atLimit}\n`))).toEqual([{ ok: false, error: 'too_large' }])
  })

  it('reports an oversized frame once, skips it, and decodes the next one', () => {
    const d = new FrameDecoder(16)
    const frames = [...d.push(b('{"x":"' + 'a'.repeat(40))), ...d.push(b('bbbb"}\n{"ok":true}\n'))]
    expect(frames).toEqual([{ ok: false, error: 'too_large' }, { ok: true, value: { ok: true } }])
  })

  it('reports an oversized frame once even when it arrives byte by byte, then carries on', () => {
    const d = new FrameDecoder(32)
    const frames = byteByByte(d, b(`${JSON.stringify({ big: 'z'.repeat(500) })}\n{"next":1}\n`))
    expect(frames).toEqual([{ ok: false, error: 'too_large' }, { ok: true, value: { next: 1 } }])
  })

  it('reports a line that is not JSON and carries on; blank lines and CRLF are tolerated', () => {
    const d = new FrameDecoder()
    expect(d.push(b('garbage\n\n{"ok":1}\r\n{"half":'))).toEqual([
      { ok: false, error: 'parse_error' },
      { ok: true, value: { ok: 1 } },
    ])
    expect(d.push(b('2}\n'))).toEqual([{ ok: true, value: { half: 2 } }])
  })

  it('round-trips what encodeFrame writes, newlines inside strings included', () => {
    const message = { text: 'line one\nline two', n: 1 }
    const frame = encodeFrame(message)
    expect(frame.indexOf('\n')).toBe(frame.length - 1)
    expect(new FrameDecoder().push(b(frame))).toEqual([{ ok: true, value: message }])
  })
})
