import { describe, expect, it } from 'vitest'
import { FrameDecoder } from './framing.js'

const b = (s: string) => Buffer.from(s)

describe('FrameDecoder', () => {
  it('assembles a frame fed byte by byte', () => {
    const d = new FrameDecoder()
    const bytes = b('{"a":1}\n')
    const frames = [...bytes].flatMap((byte) => d.push(Buffer.from([byte])))
    expect(frames).toEqual([{ ok: true, value: { a: 1 } }])
  })

  it('splits several frames in one chunk and keeps the remainder', () => {
    const d = new FrameDecoder()
    expect(d.push(b('{"a":1}\n{"b":2}\n{"c"'))).toEqual([
      { ok: true, value: { a: 1 } },
      { ok: true, value: { b: 2 } },
    ])
    expect(d.push(b(':3}\n'))).toEqual([{ ok: true, value: { c: 3 } }])
  })

  it('handles a multi-byte character split across chunks', () => {
    const d = new FrameDecoder()
    const bytes = b('{"s":"€😀"}\n')
    expect(d.push(bytes.subarray(0, 8))).toEqual([])
    expect(d.push(bytes.subarray(8))).toEqual([{ ok: true, value: { s: '€😀' } }])
  })

  it('reports an oversized frame once, skips it, and decodes the next one', () => {
    const d = new FrameDecoder(16)
    const frames = [...d.push(b('{"x":"' + 'a'.repeat(40))), ...d.push(b('bbbb"}\n{"ok":true}\n'))]
    expect(frames).toEqual([{ ok: false, error: 'too_large' }, { ok: true, value: { ok: true } }])
  })

  it('reports a line that is not JSON and carries on', () => {
    const d = new FrameDecoder()
    expect(d.push(b('garbage\n\n{"ok":1}\n'))).toEqual([{ ok: false, error: 'parse_error' }, { ok: true, value: { ok: 1 } }])
  })
})
