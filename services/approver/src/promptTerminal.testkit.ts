// The terminal prompt on a real pseudo-terminal (util-linux `script`, from
// Debian's essential bsdutils), with stdout redirected as under `npm start`,
// so that the prompt asks on /dev/tty. A test gives the body of a node script
// that drives createTerminalPrompt (built, from dist) and records outcomes;
// the test reads the terminal's screen and types into it.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist')
const sharedDist = path.resolve(dist, '../../../shared/dist')

export interface Recorded {
  name: string
  result: unknown
}

export interface PromptTerminal {
  /** Everything written to the terminal so far (the prompts, the echo of what was typed). */
  screen(): string
  /** Writes to the terminal as keys typed ('\r' is Enter). */
  type(keys: string): void
  /** Makes the script's `await signalled(name)` return. */
  signal(name: string): void
  /** What the script's `record(name, result)` calls recorded, in order. */
  recorded(): Recorded[]
  resultOf(name: string): unknown
  exited(): boolean
  /** Polls `done` every 5 ms; after `timeoutMs` fails with the screen so far. */
  until(done: () => boolean, timeoutMs?: number): Promise<void>
  close(): void
}

/**
 * Starts `body` as a node script on a new terminal. In scope for the body:
 * createTerminalPrompt (its prompts' carryOut optional: by default the answer
 * is carried out at once), SETTLE_MS, sleep, readdirSync; `summary` (one
 * request's summary) and `request(requestId)`; `outcome(asked)` ('approved',
 * 'denied' or the rejection's message); `record(name, result)`; and
 * `await signalled(name)`, which waits for the test's `signal(name)`.
 */
export function startPromptTerminal(body: string): PromptTerminal {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-cli-prompt-'))
  const script = path.join(dir, 'prompts.mjs')
  const events = path.join(dir, 'events.jsonl')
  const signalFile = (name: string) => path.join(dir, `signal-${name}`)
  writeFileSync(
    script,
    `import { appendFileSync, existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createTerminalPrompt as createPrompt, SETTLE_MS } from ${JSON.stringify(path.join(dist, 'cliPrompt.js'))}
import { summarise } from ${JSON.stringify(path.join(dist, 'summary.js'))}
import { defaultRouterTable, noPreflight } from ${JSON.stringify(path.join(sharedDist, 'index.js'))}
import { makeIntent } from ${JSON.stringify(path.join(sharedDist, 'server/testing/intents.js'))}
const summary = summarise({ intent: makeIntent(), preflight: noPreflight(), policyReasons: ['value above threshold'] }, defaultRouterTable())
const request = (requestId) => ({ requestId, quorum: null, summary })
// ask(request, signal[, carryOut]): without one, the answer is carried out at once.
const createTerminalPrompt = (timeoutMs) => { const ask = createPrompt(timeoutMs); return (r, signal, carryOut = async () => undefined) => ask(r, signal, carryOut) }
const outcome = (asked) => asked.then((yes) => (yes ? 'approved' : 'denied'), (err) => err.message)
const record = (name, result) => appendFileSync(${JSON.stringify(events)}, JSON.stringify({ name, result }) + '\\n')
const signalled = async (name) => { while (!existsSync(path.join(${JSON.stringify(dir)}, 'signal-' + name))) await sleep(10) }
${body}
process.exit(0)
`,
  )
  // stdout to a file: not a TTY, so the prompt opens the controlling terminal, the pty `script` made.
  const terminal = spawn('script', ['-qec', `${process.execPath} ${script} > ${path.join(dir, 'out.txt')} 2>&1`, '/dev/null'], { stdio: ['pipe', 'pipe', 'inherit'] })
  let screen = ''
  terminal.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString()))
  const recorded = (): Recorded[] => (existsSync(events) ? readFileSync(events, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Recorded) : [])
  return {
    screen: () => screen,
    type: (keys) => terminal.stdin.write(keys),
    signal: (name) => writeFileSync(signalFile(name), ''),
    recorded,
    resultOf: (name) => recorded().find((event) => event.name === name)?.result,
    exited: () => terminal.exitCode !== null,
    async until(done, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out; screen so far:\n${screen}`)
        await sleep(5)
      }
    },
    close() {
      terminal.stdin.end()
      terminal.kill()
    },
  }
}
