// Bytes written on one real connection and the HTTP/1.1 answers read back,
// for requests no HTTP client library would send (an Upgrade offer, CONNECT).
import net from 'node:net'

export interface RawAnswer {
  /** The status line, e.g. "HTTP/1.1 200 OK". */
  statusLine: string
  /** Header names lower-cased. */
  headers: Record<string, string>
  body: string
}

export interface RawExchange {
  answers: RawAnswer[]
  /** Whether the server had closed the connection when the last answer was read (or the time ran out). */
  closedByServer: boolean
}

/** Parses whole answers (bodies by Content-Length) off the front of `text`; the rest is left. */
function takeAnswers(text: string): { answers: RawAnswer[]; rest: string } {
  const answers: RawAnswer[] = []
  let rest = text
  for (;;) {
    const end = rest.indexOf('\r\n\r\n')
    if (end === -1) break
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim()
    const length = Number(headers['content-length'] ?? 0)
    if (rest.length < end + 4 + length) break
    answers.push({ statusLine: statusLine!, headers, body: rest.slice(end + 4, end + 4 + length) })
    rest = rest.slice(end + 4 + length)
  }
  return { answers, rest }
}

/**
 * Connects to `to` (a port on 127.0.0.1, or a Unix socket path), writes
 * `bytes`, and reads until `count` answers arrived or the server closed;
 * fails after `timeoutMs` with what it had.
 */
export function rawExchange(to: number | string, bytes: string | Buffer, count = 1, timeoutMs = 5000): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = typeof to === 'number' ? net.connect(to, '127.0.0.1') : net.connect(to)
    let text = ''
    let answers: RawAnswer[] = []
    let closed = false
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ answers, closedByServer: closed })
    }
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`${answers.length} of ${count} answers after ${timeoutMs} ms; received ${JSON.stringify(text.slice(0, 300))}`))
    }, timeoutMs)
    socket.on('data', (d: Buffer) => {
      const taken = takeAnswers(text + d.toString('latin1'))
      answers = [...answers, ...taken.answers]
      text = taken.rest
      // Give the server a moment to close after the last answer, to tell a kept connection from a closed one.
      if (answers.length >= count) setTimeout(finish, 50)
    })
    socket.on('error', () => undefined)
    socket.on('close', () => {
      if (!finished) closed = true
      finish()
    })
    socket.write(bytes)
  })
}
