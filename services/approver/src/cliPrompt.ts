import { closeSync, constants, openSync, readSync } from 'node:fs'
import { ReadStream, WriteStream } from 'node:tty'
import { DecisionNotCarriedOut, type TerminalPrompt } from './channels/terminalChannel.js'
import { escapeForDisplay } from '@countersign/shared/server'
import { cardText, DEFAULT_COLUMNS } from './card/cardText.js'
import { renderCard } from './card/renderCard.js'
import { quorumText } from './quorum/quorumVotes.js'
import type { PendingRequest } from './requests/pendingRequests.js'

/** The prompt's text: the shared card, as terminal lines for a terminal `columns` wide; it ends with the request's own title and binding. */
export function formatPrompt(request: PendingRequest, columns = DEFAULT_COLUMNS): string {
  const lines = cardText(renderCard(request.summary, request.quorum ? quorumText(request.quorum) : null), { requestId: request.requestId, indent: '  ', columns })
  return ['', '━━━━ countersign: approval requested ━━━━', ...lines].join('\n') + '\n'
}

/**
 * How long a request's card stands on the terminal before its question is
 * asked; whatever is typed until then is thrown away. Found by review: when
 * a prompt ended (an attacker's own request expiring, predictable from its
 * life), the next card and its question appeared at once, and a "y⏎" the
 * operator had just typed for the old one approved the new one unseen. The
 * dashboard's Approve and Deny wait the same 700 ms (SETTLE_MS in
 * approval-ui.html): longer than it takes a keystroke already decided on to
 * land, short next to reading a card.
 */
export const SETTLE_MS = 700

/** Said, with the question again, when what was typed before the question was asked has been thrown away. */
export const INPUT_IGNORED = 'input ignored: the request changed; read it and answer again'

/** The terminal the prompt asks on; fd is the descriptor input reads. */
type Terminal = { input: NodeJS.ReadStream; output: NodeJS.WriteStream; fd: number }

/**
 * Throws away everything typed on the terminal so far; true when there was
 * something. Between prompts nobody reads the terminal, so a line typed then
 * (and a word typed without Enter) waits in the kernel's tty buffer, or in the
 * stream's own buffer, and used to answer the next prompt the moment it was
 * shown: a "y" for a request nobody had seen. Node has no tcflush, so the
 * kernel's buffer is read empty through a second, non-blocking descriptor of
 * the same terminal, in raw mode for that moment so that a half-typed line is
 * readable too. It all happens synchronously, before the card is written
 * and again before its question is asked (SETTLE_MS later): nothing typed
 * after the question can be lost, nothing typed before it can count.
 * Throws when the terminal cannot be reopened (no /proc) or read (hung up):
 * the prompt is then not asked rather than asked with stale input.
 */
function discardTypedAhead({ input, fd }: Terminal): boolean {
  let discarded = false
  while (input.read() !== null) discarded = true
  const drain = openSync(`/proc/self/fd/${fd}`, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY)
  const wasRaw = input.isRaw
  try {
    input.setRawMode(true)
    const chunk = Buffer.alloc(4096)
    while (readAvailable(drain, chunk) > 0) discarded = true
  } finally {
    input.setRawMode(wasRaw)
    closeSync(drain)
  }
  return discarded
}

/** Bytes read from a non-blocking descriptor; 0 when none are waiting (EAGAIN) or at end of input. */
function readAvailable(fd: number, into: Buffer): number {
  try {
    return readSync(fd, into)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return 0
    throw err
  }
}

/**
 * cli mode: asks on the approver's controlling terminal (its stdin/stdout
 * when those are a TTY, else /dev/tty). Requests are asked one at a time;
 * no answer within the timeout leaves the request pending (it can still be
 * decided on the dashboard) until it expires. Each card is shown SETTLE_MS
 * before its question; only what is typed after the question counts.
 */
export function createTerminalPrompt(timeoutMs: number): TerminalPrompt {
  let queue: Promise<unknown> = Promise.resolve()
  // /dev/tty is opened once and kept for every prompt (they are asked one at a
  // time): opened per prompt, its descriptors were never closed, and a busy
  // approver ran out of them. A terminal that goes away (EIO after a hang-up)
  // drops it, and the next prompt opens it again.
  let terminal: Terminal | null = null
  const drop = (opened: Terminal) => {
    if (terminal === opened) terminal = null
    opened.input.destroy()
    opened.output.destroy()
  }
  const streams = (): Terminal => {
    if (process.stdin.isTTY && process.stdout.isTTY) return { input: process.stdin as NodeJS.ReadStream, output: process.stdout as NodeJS.WriteStream, fd: 0 }
    if (terminal) return terminal
    const fd = openSync('/dev/tty', 'r+')
    const opened = { input: new ReadStream(fd) as NodeJS.ReadStream, output: new WriteStream(fd) as NodeJS.WriteStream, fd }
    opened.input.on('error', () => drop(opened))
    opened.output.on('error', () => drop(opened))
    terminal = opened
    return opened
  }
  return (request, signal, carryOut) => {
    const asked = queue.then(
      () =>
        new Promise<boolean>((resolve, reject) => {
          if (signal.aborted) return reject(new Error('request already settled'))
          let io: Terminal
          try {
            io = streams()
          } catch (err) {
            return reject(new Error(`no terminal to ask on: ${(err as Error).message}`))
          }
          const { input, output } = io
          let typedAhead: boolean
          try {
            typedAhead = discardTypedAhead(io)
          } catch (err) {
            // Most likely a terminal that went away: the next prompt opens it again.
            if (io === terminal) drop(io)
            return reject(new Error(`cannot clear what was typed before this request: ${(err as Error).message}`))
          }
          output.write(formatPrompt(request, output.columns || DEFAULT_COLUMNS))
          // A quorum request is approved by named operators only; whoever sits here has no name, but may still stop it.
          const quorum = request.quorum !== null
          const question = quorum
            ? `needs ${request.quorum!.required} named operators (dashboard or countersign-approve); deny it here? [n = deny, Enter = leave it to them] (${Math.round(timeoutMs / 1000)} s) `
            : `approve? [y/n] (${Math.round(timeoutMs / 1000)} s) `
          // Until the card has been shown for SETTLE_MS nothing typed counts, and the question is not yet asked.
          let settling = true
          let ignored = typedAhead
          const settle = setTimeout(() => {
            let halfLine: boolean
            try {
              halfLine = discardTypedAhead(io)
            } catch (err) {
              if (io === terminal) drop(io)
              return finish(new Error(`cannot clear what was typed while this request was shown: ${(err as Error).message}`))
            }
            settling = false
            // A half-typed line was echoed after the card: the notice starts on a row of its own.
            output.write(ignored || halfLine ? `${halfLine ? '\n' : ''}${INPUT_IGNORED}\n${question}` : question)
          }, SETTLE_MS)
          let answer = ''
          const finish = (result: boolean | Error) => {
            clearTimeout(settle)
            clearTimeout(timer)
            signal.removeEventListener('abort', onAbort)
            input.off('data', onData)
            input.pause()
            if (result instanceof Error) {
              output.write(`\n${result.message}\n`)
              reject(result)
              return
            }
            // The outcome is printed once it holds: the token minted and the decision in the audit log.
            carryOut(result).then(
              (note) => {
                output.write(`${result ? 'approved' : 'denied'}${note ? ` (${escapeForDisplay(note)})` : ''}\n`)
                resolve(result)
              },
              (err: unknown) => {
                const failed = err instanceof DecisionNotCarriedOut ? err : new DecisionNotCarriedOut(err, false)
                output.write(`${result ? 'approval' : 'denial'} ${escapeForDisplay(failed.message)}${failed.askAgain ? '; the request is pending again' : ''}\n`)
                reject(failed)
              },
            )
          }
          const onData = (chunk: Buffer | string) => {
            if (settling) return void (ignored = true)
            answer += chunk.toString()
            const nl = answer.search(/[\r\n]/)
            if (nl === -1) return
            const word = answer.slice(0, nl).trim().toLowerCase()
            answer = ''
            if (quorum) {
              if (word === 'n' || word === 'no') return finish(false)
              if (word === '') return finish(new Error('left to the named operators'))
              return void output.write('only named operators can approve this request; n denies it, Enter leaves it: ')
            }
            if (word === 'y' || word === 'yes') return finish(true)
            if (word === 'n' || word === 'no') return finish(false)
            output.write('please answer y or n: ')
          }
          const onAbort = () => finish(new Error('(decided elsewhere or expired)'))
          const timer = setTimeout(() => finish(new Error('no answer in time; the request stays pending on the dashboard')), timeoutMs)
          signal.addEventListener('abort', onAbort, { once: true })
          input.setEncoding?.('utf8')
          input.on('data', onData)
          input.resume()
        }),
    )
    queue = asked.catch(() => undefined)
    return asked
  }
}
