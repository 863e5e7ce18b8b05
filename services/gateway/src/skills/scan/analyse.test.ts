import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { analyseSource } from './analyse.js'
import { RULE_IDS, type RuleId, escapeStats, forbiddenModuleReason, isHighEntropy, shannonEntropy } from './rules.js'

const corpusDir = (kind: 'bad' | 'good'): string => fileURLToPath(new URL(`./corpus/${kind}/`, import.meta.url))
const corpus = (kind: 'bad' | 'good'): string[] => readdirSync(corpusDir(kind)).filter((f) => f.endsWith('.js')).sort()
const load = (kind: 'bad' | 'good', name: string): string => readFileSync(corpusDir(kind) + name, 'utf8')

const FINDING = /^(.+):(\d+): ([a-z0-9_]+): (.+)$/

function rules(findings: string[]): string[] {
  return findings.map((f) => {
    const m = FINDING.exec(f)
    if (!m) throw new Error(`malformed finding: ${f}`)
    return m[3]!
  })
}

/** The rule id a corpus file name promises: "<rule>--<what>.js". */
function expectedRule(name: string): RuleId {
  const rule = name.split('--')[0] as RuleId
  if (!RULE_IDS.includes(rule)) throw new Error(`corpus file ${name} does not start with a rule id`)
  return rule
}

describe('corpus: bypass attempts', () => {
  const bad = corpus('bad')

  it('holds at least 40 distinct attempts covering every source-level rule', () => {
    expect(bad.length).toBeGreaterThanOrEqual(40)
    const covered = new Set(bad.map(expectedRule))
    const fileLevel: RuleId[] = ['too_large', 'timeout', 'scan_error'] // produced by limits, tested below
    for (const rule of RULE_IDS) if (!fileLevel.includes(rule)) expect(covered, rule).toContain(rule)
  })

  it.each(bad)('%s is rejected with the rule its name promises', (name) => {
    const findings = analyseSource(name, load('bad', name))
    expect(findings.length, 'at least one finding').toBeGreaterThan(0)
    expect(rules(findings)).toContain(expectedRule(name))
    for (const f of findings) expect(f.startsWith(`${name}:`)).toBe(true)
  })
})

describe('corpus: legitimate skills', () => {
  const good = corpus('good')

  it('holds at least 6 skills', () => {
    expect(good.length).toBeGreaterThanOrEqual(6)
  })

  it.each(good)('%s passes with no finding', (name) => {
    expect(analyseSource(name, load('good', name))).toEqual([])
  })
})

describe('findings', () => {
  it('are "<file>:<line>: <rule-id>: <explanation>" with a real line number', () => {
    const findings = analyseSource('skill/main.js', "const a = 1\n\nconst b = eval('a')\n")
    expect(findings).toHaveLength(1)
    expect(findings[0]).toMatch(/^skill\/main\.js:3: eval: .+/)
  })

  it('report each rule once per line and sort by line', () => {
    const findings = analyseSource('x.js', "fetch(1)\neval('1'); eval('2'); eval('3')\nprocess.env.A\n")
    expect(findings.map((f) => f.split(': ').slice(0, 2).join(': '))).toEqual([
      'x.js:1: network',
      'x.js:2: eval',
      'x.js:3: process_env',
    ])
  })

  it('every rule id in findings is a catalogued one', () => {
    for (const name of corpus('bad')) {
      for (const r of rules(analyseSource(name, load('bad', name)))) expect(RULE_IDS).toContain(r)
    }
  })
})

describe('parsing', () => {
  it('accepts ES modules and CommonJS scripts (top-level return, hashbang, sloppy code)', () => {
    expect(analyseSource('m.js', "import { x } from './x.js'\nexport const y = await x()\n")).toEqual([])
    expect(analyseSource('c.js', '#!/usr/bin/env node\nif (module.exports) return\nvar x = 010\n')).toEqual([])
  })

  it('turns a file that is neither into exactly one parse_error', () => {
    const findings = analyseSource('broken.js', 'let = ;\n}}}\nimport(\n')
    expect(findings).toHaveLength(1)
    expect(findings[0]).toMatch(/^broken\.js:1: parse_error: parse error: /)
  })

  it('never throws on truncated input', () => {
    for (const name of corpus('good')) {
      const src = load('good', name)
      for (let cut = 1; cut < src.length; cut += 37) {
        const findings = analyseSource(name, src.slice(0, cut))
        for (const r of rules(findings)) expect(['parse_error', 'obfuscation_escapes']).toContain(r)
      }
    }
  })
})

describe('limits', () => {
  it('a file over the size limit is one too_large finding and is not parsed', () => {
    const src = `${'// padding\n'.repeat(100)}eval('x')`
    const findings = analyseSource('big.js', src, { maxBytes: 200 })
    expect(findings).toHaveLength(1)
    expect(findings[0]).toMatch(/^big\.js:1: too_large: \d+ bytes exceeds the 200-byte limit/)
  })

  it('counts bytes, not characters', () => {
    expect(rules(analyseSource('u.js', `const s = '${'é'.repeat(60)}'`, { maxBytes: 100 }))).toEqual(['too_large'])
  })

  it('the default limit is 512 KiB', () => {
    const src = `/*${'x'.repeat(512 * 1024)}*/`
    expect(rules(analyseSource('big.js', src))).toEqual(['too_large'])
  })

  it('a file over the time budget gives a timeout finding', () => {
    const src = 'a.b(c, d);\n'.repeat(20_000)
    expect(rules(analyseSource('slow.js', src, { timeoutMs: 0 }))).toContain('timeout')
  })

  it('nesting deeper than the stack is too_large, not a crash', () => {
    const depth = 200_000
    const src = `x = ${'['.repeat(depth)}${']'.repeat(depth)}`
    expect(rules(analyseSource('deep.js', src))).toEqual(['too_large'])
  })
})

/** Snippets that must be rejected with the given rule (beyond the corpus). */
const REJECT: Array<[RuleId, string]> = [
  ['eval', "globalThis.globalThis.self.eval('1')"],
  ['eval', "const { eval: e } = globalThis; e('1')"],
  ['eval', "const g = globalThis, h = g; h['eval']('1')"],
  ['eval', 'setInterval(`tick()`, 5)'],
  ['eval', "new ShadowRealm().evaluate('1')"],
  ['function_constructor', "Reflect.construct(Function, ['return 1'])"],
  ['function_constructor', "const F = globalThis['Function']; F('x')"],
  ['function_constructor', "f[decodeURIComponent('%63onstructor')]"],
  ['function_constructor', "f['CONSTRUCTOR'.toLowerCase()]"],
  ['function_constructor', "Object.getOwnPropertyDescriptor(Object.getPrototypeOf(f), 'constructor')"],
  ['function_constructor', 'Error.prepareStackTrace = (e, s) => s'],
  ['forbidden_module', "require('node:child_process/')"],
  ['forbidden_module', "require('FS')"],
  ['forbidden_module', "import('https://cdn.example/x.js')"],
  ['forbidden_module', "export * as f from 'fs'"],
  ['forbidden_module', "import x from 'fs' with { type: 'json' }"],
  ['forbidden_module', "require('_http_client')"],
  ['forbidden_module', "require('v8').setFlagsFromString('--allow-natives-syntax')"],
  ['forbidden_module', "require('/usr/lib/node_modules/npm/index.js')"],
  ['forbidden_module', "import '../../gateway/dist/main.js'"],
  ['forbidden_module', "import { DatabaseSync } from 'node:sqlite'"],
  ['dynamic_import', 'require(...names)'],
  ['dynamic_import', 'require`fs`'],
  ['dynamic_import', "const { require: r } = module; r('fs')"],
  ['dynamic_import', "module['req' + 'uire']"],
  ['dynamic_import', "module._compile('code', 'x.js')"],
  ['dynamic_import', "(() => arguments[1])()('fs')"],
  ['network', 'typeof fetch === "function" && fetch("u")'],
  ['network', "const { navigator: n } = globalThis; n.sendBeacon('u')"],
  ['network', "new globalThis.WebSocket('wss://x')"],
  ['process_env', 'const { env: { HOME } } = process'],
  ['process_env', 'const { ...rest } = process; rest.env'],
  ['process_env', 'const { [k]: v } = process'],
  ['process_env', 'let p; p = process; p.env'],
  ['process_env', 'const p = (0, process); p.env'],
  ['process_env', 'JSON.stringify(process)'],
  ['process_env', 'export default process'],
  ['process_env', 'const f = () => process; f().env'],
  ['process_env', 'process.report.getReport()'],
  ['process_env', "const p = require('node:process'); p['env']"],
  ['process_env', 'export const { process: p } = globalThis'],
  ['process_env', 'const p = process\nexport { p }'],
  ['process_env', 'leaked = process'],
  // Found by review: process through import() or a re-export was not tracked as process.
  ['process_env', "const p = (await import('node:process')).default; p.getBuiltinModule('child_process'); p.env"],
  ['process_env', "export async function run(input) { return (await import('node:process')).default[input.k](input.m) }"],
  ['process_env', "import('process').then((m) => m.default.env)"],
  ['process_env', "const { default: p } = await import('PROCESS')"],
  ['process_env', 'import(`node:process`)'],
  ['process_env', "import * as p from 'node:process'; p.default.env"],
  ['process_env', "import * as p from 'node:process'; const q = p.default; q.env"],
  ['process_env', "export { default } from 'node:process'"],
  ['process_env', "export * from 'process'"],
  ['process_env', "export * as p from 'node:process'"],
  ['dynamic_import', "const m = 'node:process'; import(m)"],
  ['dynamic_import', "import('node:' + name)"],
  ['computed_global', 'export const { globalThis: g } = globalThis'],
  ['computed_global', 'const root = self\nexport { root }'],
  ['process_env', 'function f(p = process) { return p.env }'],
  ['process_binding', "import { binding } from 'node:process'"],
  ['process_binding', "globalThis.process['_linked' + 'Binding']('x')"],
  ['file_write', 'api.copyFileSync(a, b)'],
  ['file_write', 'writeFileSync(p, data)'],
  ['file_write', 'api.open(p, constants.O_WRONLY | constants.O_CREAT)'],
  ['obfuscation_escapes', "const s = '\\145\\166\\141\\154\\050\\051'"],
  ['obfuscation_fromcharcode', 'const { fromCodePoint } = String'],
  ['base64_decode', "new Buffer(payload, 'base64')"],
  ['base64_decode', "Buffer.from(payload, 'BASE64URL')"],
  ['base64_decode', "Uint8Array.fromBase64('AAAA')"],
  ['computed_global', "const g = globalThis; g[['fe', 'tch'].reverse().reverse().join('')]"],
  ['computed_global', 'const { ...all } = globalThis'],
  ['computed_global', 'const g = globalThis; someCall(g)'],
  ['computed_global', 'var o = { m() { return this } }'],
  ['computed_global', 'function F() { this[key] = 1 }'],
]

/** Snippets that must pass (ordinary code the rules must not trip on). */
const ACCEPT: string[] = [
  'const ok = typeof fetch === "undefined"',
  'if (x instanceof Function) {}',
  "if (key === 'constructor' || 'constructor' in obj) {}",
  "switch (k) { case 'constructor': break }",
  "export const abi = [{ type: 'constructor', inputs: [{ name: 'caller', type: 'address' }] }]",
  'class A { constructor() { this.k = this.constructor.name } }',
  "'use strict'\nfunction F() { this[key] = 1 }",
  "import x from './x.js'\nexport function f() { return this?.[k] }",
  "Buffer.from('deadbeef', 'hex')",
  'Buffer.from(arrayBuffer, offset, length)',
  "Buffer.from(s).toString('base64')",
  "xhr.open('GET', url)",
  'api.openSync(p, "r")',
  'truncate(text, 20)',
  "const s = '\\u2713 done'",
  "const e = '\\u00e9\\u00e8'",
  "const msg = 'fetch failed: eval of the environment'",
  "const sig = 'function transferFrom(address sender, address recipient, uint256 amount) external returns (bool); function approve(address spender, uint256 amount) external returns (bool); event Transfer(address indexed from, address indexed to, uint256 value)'",
  'const hash = "0x' + 'ab12'.repeat(60) + '"',
  "const o = { eval: 1, fetch: 2, env: 3 }; o.eval + o.fetch + o.env",
  'const { a, b } = globalThis.countersign',
  "if ('countersign' in globalThis) globalThis.countersign.submitIntent({})",
  'process.nextTick(() => {})',
  "const { nextTick } = process",
  'module.exports = { run }',
  "const helper = require('./helper.js')",
  "const path = require('node:path')",
  "import('./lazy.js')",
  "import { nextTick } from 'node:process'",
  "import * as p from 'node:process'; p.nextTick(() => {})",
  'const v = obj[key]',
  'exports.run = async () => 1',
  "const x = 'a' + 'b' + 'c'",
  'if (!globalThis.countersign) throw new Error("no api")',
  "const api = globalThis.countersign ? globalThis.countersign : null",
]

describe('rules on snippets', () => {
  it.each(REJECT)('%s: %s', (rule, src) => {
    expect(rules(analyseSource('s.js', src))).toContain(rule)
  })

  it.each(ACCEPT)('accepts: %s', (src) => {
    expect(analyseSource('s.js', src)).toEqual([])
  })
})

describe('paths and data files', () => {
  it('relative imports may move around inside the skill root but not leave it', () => {
    expect(analyseSource('lib/deep/a.js', "import x from '../../b.js'\nrequire('./c.js')")).toEqual([])
    expect(rules(analyseSource('lib/a.js', "require('../../outside.js')"))).toEqual(['forbidden_module'])
    expect(rules(analyseSource('a.js', "import('../sibling-skill/x.js')"))).toEqual(['forbidden_module'])
  })

  it('a .json file is data: valid JSON passes, invalid JSON is a parse_error, payloads are flagged', () => {
    expect(analyseSource('abi.json', JSON.stringify([{ type: 'constructor', inputs: [] }]))).toEqual([])
    expect(rules(analyseSource('bad.json', '{"a": 1,}'))).toEqual(['parse_error'])
    const payload = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 7919) % 256)).toString('base64')
    expect(rules(analyseSource('blob.json', JSON.stringify({ data: [payload] })))).toEqual(['obfuscation_entropy'])
    // JavaScript in a .json file cannot run: Node parses .json as JSON.
    expect(rules(analyseSource('code.json', "eval('1')"))).toEqual(['parse_error'])
  })
})

describe('measurements', () => {
  it('escape share ignores escaped backslashes', () => {
    expect(escapeStats(String.raw`'\\x41\\x42'`).count).toBe(0)
    expect(escapeStats(String.raw`'\x41\u0042\u{43}\101'`).count).toBe(4)
  })

  it('entropy separates payloads from prose', () => {
    expect(shannonEntropy('aaaa')).toBe(0)
    expect(shannonEntropy('abcd')).toBe(2)
    const payload = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 7919) % 256)).toString('base64')
    expect(isHighEntropy(payload)).toBe(true)
    expect(isHighEntropy('the quick brown fox jumps over the lazy dog '.repeat(6))).toBe(false)
  })

  it('module names are normalised like Node does, conservatively', () => {
    expect(forbiddenModuleReason('node:fs')).not.toBeNull()
    expect(forbiddenModuleReason('fs/promises')).not.toBeNull()
    expect(forbiddenModuleReason('node:dns/promises')).not.toBeNull()
    expect(forbiddenModuleReason('data:text/javascript,1')).not.toBeNull()
    expect(forbiddenModuleReason('./fs.js')).toBeNull()
    expect(forbiddenModuleReason('fs-extra-lookalike')).toBeNull()
    expect(forbiddenModuleReason('node:path')).toBeNull()
  })
})
