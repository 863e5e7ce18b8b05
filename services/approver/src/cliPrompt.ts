import { openSync } from 'node:fs'
import { ReadStream, WriteStream } from 'node:tty'
import type { TerminalPrompt } from './channels/terminalChannel.js'
import { cardText } from './card/cardText.js'
import { renderCard } from './card/renderCard.js'
import { quorumText } from './quorum/quorumVotes.js'
import type { PendingRequest } from './requests/pendingRequests.js'

/** The prompt's text: the shared card, as terminal lines. */
export function formatPrompt(request: PendingRequest): string {
  const lines = cardText(renderCard(request.summary, request.quorum ? quorumText(request.quorum) : null), { requestId: request.requestId, indent: '  ' })
  return ['', '━━━━ countersign: approval requested ━━━━', ...lines].join('\n') + '\n'
}

/**
 * cli mode: asks on the approver's controlling terminal (its stdin/stdout
 * when those are a TTY, else /dev/tty). Requests are asked one at a time;
 * no answer within the timeout leaves the request pending (it can still be
 * decided on the dashboard) until it expires.
 */
export function createTerminalPrompt(timeoutMs: number): TerminalPrompt {
  let queue: Promise<unknown> = Promise.resolve()
  // /dev/tty is opened once and kept for every prompt (they are asked one at a
  // time): opened per prompt, its descriptors were never closed, and a busy
  // approver ran out of them. A terminal that goes away (EIO after a hang-up)
  // drops it, and the next prompt opens it again.
  let terminal: { input: NodeJS.ReadStream; output: NodeJS.WriteStream } | null = null
  const streams = () => {
    if (process.stdin.isTTY && process.stdout.isTTY) return { input: process.stdin as NodeJS.ReadStream, output: process.stdout as NodeJS.WriteStream }
    if (terminal) return terminal
    const fd = openSync('/dev/tty', 'r+')
    const opened = { input: new ReadStream(fd) as NodeJS.ReadStream, output: new WriteStream(fd) as NodeJS.WriteStream }
    const lost = () => {
      if (terminal === opened) terminal = null
      opened.input.destroy()
      opened.output.destroy()
    }
    opened.input.on('error', lost)
    opened.output.on('error', lost)
    terminal = opened
    return opened
  }
  return (request, signal) => {
    const asked = queue.then(
      () =>
        new Promise<boolean>((resolve, reject) => {
          if (signal.aborted) return reject(new Error('request already settled'))
          let io: ReturnType<typeof streams>
          try {
            io = streams()
          } catch (err) {
            return reject(new Error(`no terminal to ask on: ${(err as Error).message}`))
          }
          const { input, output } = io
          output.write(formatPrompt(request))
          // A quorum request is approved by named operators only; whoever sits here has no name, but may still stop it.
          const quorum = request.quorum !== null
          output.write(
            quorum
              ? `needs ${request.quorum!.required} named operators (dashboard or countersign-approve); deny it here? [n = deny, Enter = leave it to them] (${Math.round(timeoutMs / 1000)} s) `
              : `approve? [y/n] (${Math.round(timeoutMs / 1000)} s) `,
          )
          let answer = ''
          const finish = (result: boolean | Error) => {
            clearTimeout(timer)
            signal.removeEventListener('abort', onAbort)
            input.off('data', onData)
            input.pause()
            if (result instanceof Error) {
              output.write(`\n${result.message}\n`)
              reject(result)
            } else {
              output.write(result ? 'approved\n' : 'denied\n')
              resolve(result)
            }
          }
          const onData = (chunk: Buffer | string) => {
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
