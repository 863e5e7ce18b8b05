// The terminal prompt on a real pseudo-terminal (util-linux `script`, from
// Debian's essential bsdutils), with stdout redirected as under `npm start`,
// so that the prompt asks on /dev/tty.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist')
const sharedDist = path.resolve(dist, '../../../shared/dist')

describe('createTerminalPrompt on /dev/tty', () => {
  it('keeps one terminal open across prompts: 40 unanswered prompts do not leave 40 sets of descriptors', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-cli-prompt-'))
    const script = path.join(dir, 'prompts.mjs')
    const result = path.join(dir, 'result.json')
    writeFileSync(
      script,
      `import { readdirSync, writeFileSync } from 'node:fs'
import { createTerminalPrompt } from ${JSON.stringify(path.join(dist, 'cliPrompt.js'))}
import { summarise } from ${JSON.stringify(path.join(dist, 'summary.js'))}
import { defaultRouterTable, noPreflight } from ${JSON.stringify(path.join(sharedDist, 'index.js'))}
import { makeIntent } from ${JSON.stringify(path.join(sharedDist, 'server/testing/intents.js'))}
const fds = () => readdirSync('/proc/self/fd').length
const ask = createTerminalPrompt(5)
const request = { requestId: 'r', quorum: null, summary: summarise({ intent: makeIntent(), preflight: noPreflight(), policyReasons: ['value above threshold'] }, defaultRouterTable()) }
const counts = []
const outcomes = new Set()
for (let i = 0; i < 40; i++) {
  await ask(request, new AbortController().signal).catch((e) => outcomes.add(e.message))
  counts.push(fds())
}
writeFileSync(${JSON.stringify(result)}, JSON.stringify({ first: counts[0], last: counts.at(-1), outcomes: [...outcomes] }))
process.exit(0)
`,
    )
    // stdout to a file: not a TTY, so the prompt opens the controlling terminal, the pty `script` made.
    await run('script', ['-qec', `${process.execPath} ${script} > ${path.join(dir, 'out.txt')} 2>&1`, '/dev/null'], { timeout: 30_000 })
    const { first, last, outcomes } = JSON.parse(readFileSync(result, 'utf8')) as { first: number; last: number; outcomes: string[] }
    // Every prompt was shown on the terminal and timed out unanswered.
    expect(outcomes).toEqual(['no answer in time; the request stays pending on the dashboard'])
    expect(last - first).toBeLessThanOrEqual(2)
  })
})
