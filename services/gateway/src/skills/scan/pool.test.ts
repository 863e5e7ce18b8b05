import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { analyseSource } from './analyse.js'
import { createScanPool, scanWorkerPath, type ScanFile } from './pool.js'

// The pool runs the compiled worker (dist/skills/scan/worker.js): run
// `npx tsc -b` before these tests.

const corpusFiles = (kind: 'bad' | 'good'): ScanFile[] => {
  const dir = fileURLToPath(new URL(`./corpus/${kind}/`, import.meta.url))
  return readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .sort()
    .map((f) => ({ path: `${kind}/${f}`, source: readFileSync(dir + f, 'utf8') }))
}

const ruleOf = (finding: string): string => finding.split(': ')[1] ?? ''

/** ~400 KB that parses: many statements, each with several nodes. */
const bulky = (bytes: number): string => {
  const line = 'total = total + compute(values[index], index * 3, { key: "k", n: 1 });\n'
  return `let total = 0\n${line.repeat(Math.ceil(bytes / line.length))}`
}

describe('createScanPool', () => {
  const pool = createScanPool({ maxThreads: 2, timeoutMs: 2000 })
  afterAll(() => pool.close())

  it('finds the compiled worker', () => {
    expect(scanWorkerPath()).toMatch(/dist[\\/]skills[\\/]scan[\\/]worker\.js$/)
    expect(existsSync(scanWorkerPath())).toBe(true)
  })

  it('scans many files in parallel with the same findings as the analyser, in file order', async () => {
    const files = [...corpusFiles('good'), ...corpusFiles('bad')]
    const findings = await pool.scan(files)
    const expected = files.flatMap((f) => analyseSource(f.path, f.source))
    expect(findings).toEqual(expected)
    expect(findings.length).toBeGreaterThanOrEqual(corpusFiles('bad').length)
  })

  it('returns no findings for a clean skill', async () => {
    expect(await pool.scan(corpusFiles('good'))).toEqual([])
    expect(await pool.scan([])).toEqual([])
  })

  it('rejects a huge file as too_large without parsing it', async () => {
    const huge = { path: 'huge.js', source: `/*${'x'.repeat(600 * 1024)}*/` }
    const started = performance.now()
    const findings = await pool.scan([huge, { path: 'ok.js', source: 'export const a = 1' }])
    expect(findings).toHaveLength(1)
    expect(findings[0]).toMatch(/^huge\.js:1: too_large: /)
    expect(performance.now() - started).toBeLessThan(2000)
  })

  it('handles pathological files within the limit (deep nesting, token soup)', async () => {
    const depth = 200_000
    const files: ScanFile[] = [
      { path: 'nested.js', source: `x = ${'('.repeat(depth)}1${')'.repeat(depth)}` },
      { path: 'brackets.js', source: `x = ${'['.repeat(depth)}${']'.repeat(depth)}` },
      { path: 'soup.js', source: `x = ${'a+'.repeat(depth)}a` },
      { path: 'bulky.js', source: bulky(400 * 1024) },
    ]
    const started = performance.now()
    const findings = await pool.scan(files)
    const elapsed = performance.now() - started
    // Each file either passes, or is rejected as too deep / out of time: never a hang or a crash.
    for (const f of findings) expect(['too_large', 'timeout']).toContain(ruleOf(f))
    for (const name of ['nested.js', 'brackets.js', 'soup.js']) {
      expect(findings.some((f) => f.startsWith(`${name}:`))).toBe(true)
    }
    // Two threads, four files, 2 s limit each (+ thread start): bounded.
    expect(elapsed).toBeLessThan(2 * 2250 + 5000)
  })

  it('keeps the event loop responsive while scanning', async () => {
    const files: ScanFile[] = Array.from({ length: 6 }, (_, i) => ({ path: `b${i}.js`, source: bulky(400 * 1024) }))
    // Event-loop utilisation counts the time the main thread spent running
    // code rather than waiting for events, so it does not depend on how
    // loaded the machine is (a wall-clock gap bound did, and failed at load
    // average 15). Analysing 2.4 MB on the main thread would keep it busy
    // nearly the whole time (utilisation close to 1).
    const before = performance.eventLoopUtilization()
    const findings = await pool.scan(files)
    const busy = performance.eventLoopUtilization(before)
    for (const f of findings) expect(ruleOf(f)).toBe('timeout') // only a slow machine may time out
    expect(busy.utilization).toBeLessThan(0.5)
  })
})

describe('timeouts', () => {
  it('a file that exceeds the time limit becomes a timeout finding, and the pool keeps working', async () => {
    // hardStopSlackMs 0: the worker is terminated at the limit, not left to notice it.
    const pool = createScanPool({ maxThreads: 1, timeoutMs: 100, hardStopSlackMs: 0 })
    try {
      const started = performance.now()
      const findings = await pool.scan([{ path: 'slow.js', source: bulky(500 * 1024) }])
      expect(findings).toHaveLength(1)
      expect(findings[0]).toMatch(/^slow\.js:1: timeout: /)
      expect(performance.now() - started).toBeLessThan(5000)
      // The replacement worker still scans.
      expect(await pool.scan([{ path: 'e.js', source: "eval('1')" }])).toEqual([
        expect.stringMatching(/^e\.js:1: eval: /),
      ])
    } finally {
      await pool.close()
    }
  })

  it('refuses to scan after close', async () => {
    const pool = createScanPool({ maxThreads: 1 })
    await pool.close()
    await expect(pool.scan([{ path: 'a.js', source: '1' }])).rejects.toThrow(/closed/)
  })
})
