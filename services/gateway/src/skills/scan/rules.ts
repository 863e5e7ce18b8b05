// Rule catalogue of the skill static analyser: ids, the names and modules
// each rule is about, limits, and the small string measurements used by the
// obfuscation rules. The AST walk that applies them lives in analyse.ts.
//
// Every finding rejects the skill (SPEC endpoint rule 8); nothing here is a
// warning. Rule ids are part of the API (they reach clients inside
// `scanFindings` strings "<file>:<line>: <rule-id>: <explanation>"), so
// they must stay stable.

import { posix } from 'node:path'

export const RULE_IDS = [
  'eval',
  'function_constructor',
  'forbidden_module',
  'dynamic_import',
  'network',
  'process_env',
  'process_binding',
  'file_write',
  'obfuscation_escapes',
  'obfuscation_fromcharcode',
  'obfuscation_entropy',
  'base64_decode',
  'with_statement',
  'computed_global',
  'parse_error',
  'too_large',
  'timeout',
  'scan_error',
] as const

export type RuleId = (typeof RULE_IDS)[number]

/** One line per rule, for documentation and error pages. */
export const RULE_DESCRIPTIONS: Readonly<Record<RuleId, string>> = {
  eval: 'eval in any form (direct, indirect, aliased, via the global object), string code given to setTimeout/setInterval, ShadowRealm',
  function_constructor:
    'Function / new Function, and function reflection that reaches it or code outside the file: .constructor (other than this.constructor), .caller, .callee, Error.prepareStackTrace',
  forbidden_module:
    'import/require/export-from of child_process, fs, net, http(s/2), dgram, tls, dns, worker_threads, vm, cluster, inspector, module, v8, repl, wasi, sqlite and Node internals, with or without node:; of data:/http:/file: URLs, absolute paths or relative paths that leave the skill root; createRequire',
  dynamic_import:
    'require/import() whose argument is not a string constant, require used as a value, module.* other than exports, process.mainModule, top-level arguments (the CommonJS wrapper arguments include require)',
  network: 'fetch, XMLHttpRequest, WebSocket, EventSource, navigator.sendBeacon, in any spelling',
  process_env: 'process.env in any spelling, process.report, process used as a value, computed access on process, import() or re-export (export … from) of process',
  process_binding: 'process.binding, process._linkedBinding, process.dlopen',
  file_write: 'calls named like file writes/removals (writeFile, appendFile, createWriteStream, rm, unlink, mkdir, ...) on any object, open() with a write flag',
  obfuscation_escapes: 'string literals made mostly of \\x/\\u/octal escapes, escaped identifiers',
  obfuscation_fromcharcode: 'String.fromCharCode / String.fromCodePoint in any form',
  obfuscation_entropy: 'very long high-entropy string literals (packed payloads)',
  base64_decode: 'atob, Buffer.from(x, "base64") or with a non-constant encoding, Uint8Array.fromBase64',
  with_statement: 'with statements',
  computed_global:
    'globalThis/global/self/window (or a sloppy-mode function this) accessed with a non-constant key or used as a value',
  parse_error: 'the file is neither a valid ES module nor a valid script',
  too_large: 'the file exceeds the size limit, is nested too deeply, or exhausted the analyser memory',
  timeout: 'the analysis exceeded the per-file time limit',
  scan_error: 'the analyser failed for another reason (fails closed)',
}

export interface ScanLimits {
  /** Maximum UTF-8 size of one file; larger files are not parsed. */
  maxBytes: number
  /** Per-file analysis time budget in milliseconds. */
  timeoutMs: number
}

export const DEFAULT_LIMITS: Readonly<ScanLimits> = Object.freeze({
  maxBytes: 512 * 1024,
  timeoutMs: 2000,
})

/** At most this many findings are reported per file (the first is enough to reject). */
export const MAX_FINDINGS_PER_FILE = 100

export function formatFinding(file: string, line: number, rule: RuleId, explanation: string): string {
  return `${file}:${line}: ${rule}: ${explanation}`
}

// ---------------------------------------------------------------- modules

/**
 * Node built-ins a skill may not load. Matched on the first path segment
 * after stripping `node:` (so `fs/promises`, `dns/promises`,
 * `inspector/promises` are covered). `module` gives createRequire and
 * Module._load, `v8`/`repl`/`wasi` are escape hatches of their own, the
 * underscore names are the legacy public aliases of http/tls internals.
 */
const FORBIDDEN_BUILTINS: ReadonlyMap<string, string> = new Map([
  ['child_process', 'spawns processes'],
  ['fs', 'file system access'],
  ['net', 'network access'],
  ['http', 'network access'],
  ['https', 'network access'],
  ['http2', 'network access'],
  ['dgram', 'network access'],
  ['tls', 'network access'],
  ['dns', 'network access (DNS lookups can exfiltrate)'],
  ['worker_threads', 'runs code outside the analysed file'],
  ['vm', 'evaluates code'],
  ['cluster', 'spawns processes'],
  ['inspector', 'debugger access'],
  ['module', 'createRequire / Module._load load anything'],
  ['v8', 'engine internals (setFlagsFromString, deserialize)'],
  ['repl', 'evaluates code'],
  ['wasi', 'grants file system access to WebAssembly'],
  ['trace_events', 'writes trace files'],
  ['sqlite', 'creates and writes database files'],
  ['_http_agent', 'network access'],
  ['_http_client', 'network access'],
  ['_http_common', 'network access'],
  ['_http_incoming', 'network access'],
  ['_http_outgoing', 'network access'],
  ['_http_server', 'network access'],
  ['_tls_common', 'network access'],
  ['_tls_wrap', 'network access'],
  ['_stream_wrap', 'raw handle access'],
])

/** Module name as Node would match it against a built-in (conservatively normalised). */
export function normaliseSpecifier(spec: string): string {
  let s = spec.trim().toLowerCase()
  if (s.startsWith('node:')) s = s.slice(5)
  return s.replace(/\/+$/, '')
}

/**
 * Why loading `spec` from the skill file `fromFile` (a path relative to the
 * skill root) is forbidden, or null when it is allowed. Bare package names
 * other than Node built-ins are allowed here: the sandbox must make sure
 * nothing outside the skill root is resolvable.
 */
export function forbiddenModuleReason(spec: string, fromFile?: string): string | null {
  const raw = spec.trim().toLowerCase()
  // Code from URLs: data:/blob: are inline code (an eval in disguise),
  // http(s): is remote code, file: reaches outside the skill root.
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(raw)
  if (scheme && scheme[1] !== 'node') return `loads code from a ${scheme[1]}: URL`
  if (spec.startsWith('/') || spec.startsWith('\\')) return 'an absolute path reaches outside the skill root'
  if (fromFile !== undefined && /^\.\.?(\/|$)/.test(spec)) {
    const from = fromFile.replace(/\\/g, '/')
    if (!from.startsWith('/')) {
      const target = posix.normalize(posix.join(posix.dirname(from), spec))
      if (target === '..' || target.startsWith('../')) return 'a relative path leaves the skill root'
    }
  }
  const first = normaliseSpecifier(spec).split('/')[0] ?? ''
  const why = FORBIDDEN_BUILTINS.get(first)
  return why === undefined ? null : why
}

// ---------------------------------------------------------------- names

/** Identifiers that name the global object (treated as such even if shadowed: conservative). */
export const GLOBAL_OBJECT_NAMES: ReadonlySet<string> = new Set(['globalThis', 'global', 'self', 'window'])

/**
 * Symbolic values that are tracked through aliases (`const p = process`)
 * and destructuring. `escape` is the rule reported when such a value is used
 * in a way the analyser cannot follow (passed to a call, stored in an
 * object, returned, spread...); null means it is only tracked.
 */
export const ROOTS: ReadonlyMap<string, RuleId | null> = new Map<string, RuleId | null>([
  ['globalThis', 'computed_global'],
  ['process', 'process_env'],
  ['module', 'dynamic_import'],
  ['navigator', 'network'],
  ['Buffer', null],
  ['String', null],
])

/** Members of the CommonJS `module` object a skill may touch. */
export const MODULE_ALLOWED_MEMBERS: ReadonlySet<string> = new Set(['exports', 'id', 'filename', 'loaded', 'path'])

/** Callables that load a module from a string. */
export const REQUIRE_LIKE: ReadonlySet<string> = new Set(['require', 'module.require', 'process.getBuiltinModule'])

/** Symbolic values whose mere use (other than `typeof x`) is a finding. */
export const BANNED: ReadonlyMap<string, readonly [RuleId, string]> = new Map<string, readonly [RuleId, string]>([
  ['eval', ['eval', 'eval evaluates strings as code']],
  ['ShadowRealm', ['eval', 'ShadowRealm.evaluate evaluates strings as code']],
  ['Function', ['function_constructor', 'the Function constructor evaluates strings as code']],
  ['fetch', ['network', 'fetch is direct network access']],
  ['XMLHttpRequest', ['network', 'XMLHttpRequest is direct network access']],
  ['WebSocket', ['network', 'WebSocket is direct network access']],
  ['WebSocketStream', ['network', 'WebSocketStream is direct network access']],
  ['EventSource', ['network', 'EventSource is direct network access']],
  ['navigator.sendBeacon', ['network', 'navigator.sendBeacon is direct network access']],
  ['atob', ['base64_decode', 'atob decodes hidden payloads (flagged wherever it is used)']],
  ['createRequire', ['forbidden_module', 'createRequire builds a require that loads anything']],
  ['process.env', ['process_env', 'process.env is environment access']],
  ['process.report', ['process_env', 'process.report includes the environment and writes report files']],
  ['process.binding', ['process_binding', 'process.binding reaches Node internals']],
  ['process._linkedBinding', ['process_binding', 'process._linkedBinding reaches Node internals']],
  ['process.dlopen', ['process_binding', 'process.dlopen loads native code']],
  ['process.mainModule', ['dynamic_import', 'process.mainModule gives access to require']],
  ['require', ['dynamic_import', 'require used as a value cannot be checked']],
  ['module.require', ['dynamic_import', 'module.require used as a value cannot be checked']],
  ['process.getBuiltinModule', ['dynamic_import', 'process.getBuiltinModule used as a value cannot be checked']],
])

/**
 * Property names reported on any object (the object is usually unknowable):
 * reading `.constructor` of a function yields Function, `.caller` and
 * `.callee` walk to other functions (in CommonJS, to the module wrapper and
 * its require argument), prepareStackTrace hands out call-site functions.
 */
export const BANNED_PROPERTIES: ReadonlyMap<string, readonly [RuleId, string]> = new Map<
  string,
  readonly [RuleId, string]
>([
  ['constructor', ['function_constructor', 'constructor access can reach the Function constructor']],
  ['caller', ['function_constructor', 'function .caller reaches code outside the file']],
  ['callee', ['function_constructor', 'arguments.callee reaches code outside the file']],
  ['prepareStackTrace', ['function_constructor', 'prepareStackTrace exposes call-site functions']],
  ['fromCharCode', ['obfuscation_fromcharcode', 'String.fromCharCode builds hidden strings']],
  ['fromCodePoint', ['obfuscation_fromcharcode', 'String.fromCodePoint builds hidden strings']],
  ['createRequire', ['forbidden_module', 'createRequire builds a require that loads anything']],
  ['sendBeacon', ['network', 'sendBeacon is direct network access']],
  ['fromBase64', ['base64_decode', 'fromBase64 decodes hidden payloads']],
])

/**
 * String constants that are only useful to reach something banned by name
 * (`Reflect.get(f, 'constructor')`, `obj['ev' + 'al']`). Reported wherever
 * they are built, except as an operand of a comparison, `in` or a switch
 * case (`if (key === 'constructor')` is an ordinary prototype-pollution
 * guard) and as a property value in an object literal (contract ABIs are
 * full of `{ type: 'constructor' }` and `{ name: 'caller' }`).
 */
export const MAGIC_STRINGS: ReadonlyMap<string, readonly [RuleId, string]> = new Map<string, readonly [RuleId, string]>([
  ['constructor', ['function_constructor', "the string 'constructor' is used to reach the Function constructor"]],
  ['caller', ['function_constructor', "the string 'caller' is used for function reflection"]],
  ['callee', ['function_constructor', "the string 'callee' is used for function reflection"]],
  ['eval', ['eval', "the string 'eval' is used to reach eval"]],
  ['fromCharCode', ['obfuscation_fromcharcode', "the string 'fromCharCode' is used to reach String.fromCharCode"]],
  ['fromCodePoint', ['obfuscation_fromcharcode', "the string 'fromCodePoint' is used to reach String.fromCodePoint"]],
  ['getBuiltinModule', ['dynamic_import', "the string 'getBuiltinModule' is used to reach a module loader"]],
  ['mainModule', ['dynamic_import', "the string 'mainModule' is used to reach require"]],
  ['_linkedBinding', ['process_binding', "the string '_linkedBinding' is used to reach Node internals"]],
  ['dlopen', ['process_binding', "the string 'dlopen' is used to load native code"]],
])

/**
 * Calls with these names write or remove files. They can only be reached
 * through fs (already forbidden) or a host object, so they are flagged on
 * any object as a second line of defence. Plain `write` is left out: it is
 * every stream's method.
 */
export const FILE_WRITE_CALLS: ReadonlySet<string> = new Set([
  'writeFile', 'writeFileSync', 'appendFile', 'appendFileSync', 'createWriteStream',
  'writeTextFile', 'writeTextFileSync', 'writeSync', 'writev', 'writevSync',
  'rm', 'rmSync', 'rmdir', 'rmdirSync', 'unlink', 'unlinkSync',
  'mkdir', 'mkdirSync', 'mkdtemp', 'mkdtempSync',
  'copyFile', 'copyFileSync', 'cp', 'cpSync', 'renameSync',
  'truncateSync', 'ftruncateSync',
  'symlink', 'symlinkSync', 'linkSync',
  'chmod', 'chmodSync', 'lchmod', 'lchmodSync', 'fchmod', 'fchmodSync',
  'chown', 'chownSync', 'lchown', 'lchownSync', 'fchown', 'fchownSync',
  'utimes', 'utimesSync', 'lutimes', 'lutimesSync', 'futimes', 'futimesSync',
])

/**
 * Called as a bare function (`writeFileSync(...)`, only reachable through a
 * forbidden fs import anyway) only the unmistakable names count: short
 * ones like rm/unlink/mkdir are ordinary function names in other code.
 * On an object (`x.rm(...)`) every name in FILE_WRITE_CALLS counts.
 */
export function isBareFileWriteCall(name: string): boolean {
  return FILE_WRITE_CALLS.has(name) && (name.endsWith('Sync') || name.includes('File') || name.includes('WriteStream'))
}

/** `open`-style calls whose flag argument (index 1) decides whether they write. */
export const OPEN_CALLS: ReadonlySet<string> = new Set(['open', 'openSync'])

/** fs flag strings that write: w, a, + (r+, w+, a+, wx, as...); other strings (URLs) are not flags. */
export function isWriteFlag(flag: string): boolean {
  return /^[rwasx]{1,2}\+?$/.test(flag) && /[wa+]/.test(flag)
}

/** Names of fs.constants flags that write. */
export function isWriteConstant(name: string): boolean {
  return /^O_(WRONLY|RDWR|CREAT|APPEND|TRUNC)$/.test(name)
}

/** Timer functions that evaluate a string first argument (in browsers; Node throws). */
export const STRING_TIMERS: ReadonlySet<string> = new Set(['setTimeout', 'setInterval', 'setImmediate'])

/** Encodings that make Buffer.from a base64 decoder. */
export function isBase64Encoding(enc: string): boolean {
  return /^base64(url)?$/i.test(enc)
}

// ---------------------------------------------------------------- obfuscation measurements

/** Escape-heavy strings: share of the raw text spent on \x.., \u...., \u{...} and octal escapes. */
export const ESCAPE_SHARE_THRESHOLD = 0.3
/** Raw literals shorter than this are not judged (one escaped accent is normal). */
export const ESCAPE_MIN_RAW_LENGTH = 16
/** ... and at least this many escapes are needed. */
export const ESCAPE_MIN_COUNT = 4

export interface EscapeStats {
  count: number
  escapedChars: number
  share: number
}

/**
 * Measures numeric escapes in the raw source text of a string literal or
 * template chunk (quotes included or not: they barely move the share).
 * `\\` pairs are consumed so an escaped backslash followed by "x41" is not
 * counted.
 */
export function escapeStats(raw: string): EscapeStats {
  let count = 0
  let escapedChars = 0
  const re = /\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|u\{[0-9a-fA-F]+\}|[0-7]{1,3}|[\s\S])/g
  for (let m = re.exec(raw); m !== null; m = re.exec(raw)) {
    const body = m[0].slice(1)
    if (/^(x|u|[0-7])/.test(body)) {
      count++
      escapedChars += m[0].length
    }
  }
  return { count, escapedChars, share: raw.length === 0 ? 0 : escapedChars / raw.length }
}

export function isEscapeObfuscated(raw: string): boolean {
  if (raw.length < ESCAPE_MIN_RAW_LENGTH) return false
  const s = escapeStats(raw)
  return s.count >= ESCAPE_MIN_COUNT && s.share > ESCAPE_SHARE_THRESHOLD
}

/**
 * Long strings with more entropy than text or hex: English prose and JSON
 * (ABIs included) measure about 4.1-4.4 bits/char, hex at most 4.0, while
 * base64 payloads measure 4.6-6.0. Strings with words (more than 5%
 * whitespace) are exempt: word lists and human-readable ABIs
 * ('function transfer(address to, uint256 amount) ...') can exceed 4.5
 * with mixed case, packed payloads have no spaces.
 */
export const ENTROPY_MIN_LENGTH = 200
export const ENTROPY_THRESHOLD = 4.5
export const ENTROPY_MAX_WHITESPACE_SHARE = 0.05

/** Shannon entropy in bits per UTF-16 code unit. */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0
  const counts = new Map<number, number>()
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    counts.set(c, (counts.get(c) ?? 0) + 1)
  }
  let h = 0
  for (const n of counts.values()) {
    const p = n / s.length
    h -= p * Math.log2(p)
  }
  return h
}

export function isHighEntropy(s: string): boolean {
  if (s.length <= ENTROPY_MIN_LENGTH) return false
  const whitespace = s.length - s.replace(/\s/g, '').length
  if (whitespace / s.length > ENTROPY_MAX_WHITESPACE_SHARE) return false
  return shannonEntropy(s) > ENTROPY_THRESHOLD
}
