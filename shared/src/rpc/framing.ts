import { StringDecoder } from 'node:string_decoder'

export const DEFAULT_MAX_FRAME_BYTES = 1024 * 1024

export type FrameError = 'too_large' | 'parse_error'
export type Frame = { ok: true; value: unknown } | { ok: false; error: FrameError }

/**
 * Newline-delimited JSON. JSON.stringify never emits a raw newline, so a
 * newline always ends a frame. Chunks may split frames anywhere, even inside
 * a multi-byte character. A frame over the limit is reported once and its
 * bytes are skipped up to the next newline; the stream stays usable. Blank
 * lines are ignored.
 */
export class FrameDecoder {
  private readonly text = new StringDecoder('utf8')
  private buffer = ''
  private bufferBytes = 0
  private discarding = false

  constructor(private readonly maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** True while a frame has started and its newline has not arrived yet. */
  get midFrame(): boolean {
    return this.discarding || this.bufferBytes > 0
  }

  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = []
    let rest = this.text.write(chunk)
    while (rest.length > 0) {
      const nl = rest.indexOf('\n')
      const piece = nl === -1 ? rest : rest.slice(0, nl)
      rest = nl === -1 ? '' : rest.slice(nl + 1)
      if (!this.discarding) this.append(piece, frames)
      if (nl !== -1) this.endLine(frames)
    }
    return frames
  }

  private append(piece: string, frames: Frame[]): void {
    this.buffer += piece
    this.bufferBytes += Buffer.byteLength(piece)
    if (this.bufferBytes <= this.maxFrameBytes) return
    frames.push({ ok: false, error: 'too_large' })
    this.discarding = true
    this.buffer = ''
    this.bufferBytes = 0
  }

  private endLine(frames: Frame[]): void {
    if (!this.discarding) {
      const line = this.buffer.trim()
      if (line.length > 0) frames.push(parseFrame(line))
    }
    this.discarding = false
    this.buffer = ''
    this.bufferBytes = 0
  }
}

export function parseFrame(line: string): Frame {
  try {
    return { ok: true, value: JSON.parse(line) as unknown }
  } catch {
    return { ok: false, error: 'parse_error' }
  }
}

/** One frame: the message as JSON and a newline. Throws on what JSON cannot carry (BigInt, cycles). */
export function encodeFrame(message: unknown): string {
  return `${JSON.stringify(message)}\n`
}
