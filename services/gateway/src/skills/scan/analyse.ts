// Static analysis of one skill file: parse with acorn, walk the AST twice
// (collect aliases, then check), return findings
// "<file>:<line>: <rule-id>: <explanation>". Synchronous and CPU-bound: the
// gateway runs it in the worker pool (pool.ts), never on the event loop.
//
// Model. Expressions are resolved to symbolic paths: `globalThis.process.env`,
// `const p = process; p.env`, `const { env } = process`, `process['env']`
// all resolve to "process.env". A few values are "roots" (the global
// object, process, module, navigator): they are followed through simple
// aliases and destructuring, and any other use of them (passed to a call,
// stored in an object, returned, spread, computed access with a key that is
// not a constant) is itself a finding, because from there the analyser
// cannot see what is read. Values that are dangerous by themselves (eval,
// Function, fetch, require used as a value...) are findings wherever they
// are referenced, so aliasing them is caught at the alias.
//
// Everything is conservative: names are not scope-resolved (a local
// variable called `process` is treated as the global one), and constant
// folding through variables is used only to add findings, never to allow
// something. See the limitations listed in the module report / docs.

import * as acorn from 'acorn'
import * as walk from 'acorn-walk'
import {
  BANNED,
  BANNED_PROPERTIES,
  DEFAULT_LIMITS,
  FILE_WRITE_CALLS,
  GLOBAL_OBJECT_NAMES,
  isBareFileWriteCall,
  MAGIC_STRINGS,
  MAX_FINDINGS_PER_FILE,
  MODULE_ALLOWED_MEMBERS,
  OPEN_CALLS,
  REQUIRE_LIKE,
  ROOTS,
  STRING_TIMERS,
  forbiddenModuleReason,
  formatFinding,
  isBase64Encoding,
  isEscapeObfuscated,
  isHighEntropy,
  isWriteConstant,
  isWriteFlag,
  normaliseSpecifier,
  type RuleId,
  type ScanLimits,
} from './rules.js'

import { moduleRequests, type ModuleRequest } from './moduleRequests.js'

type Node = acorn.AnyNode

/** Thrown inside the walk to stop it; turned into one finding. */
class StopScan extends Error {
  constructor(
    readonly rule: RuleId,
    readonly explanation: string,
  ) {
    super(explanation)
  }
}

/** A JS stack overflow, or acorn's own report of one ("Not enough stack space to parse input"). */
function isStackOverflow(e: unknown): boolean {
  if (e instanceof RangeError && /call stack/i.test(e.message)) return true
  return e instanceof SyntaxError && /stack space/i.test(e.message)
}

type Parsed =
  | { ok: true; program: acorn.Program; module: boolean }
  | { ok: false; line: number; rule: RuleId; explanation: string }

// No `locations`: line numbers are computed from offsets only for findings,
// which roughly halves parse time and memory on large files.
const PARSE_BASE = { ecmaVersion: 'latest', allowHashBang: true } as const

/** ES module first; then a CommonJS-friendly script. One finding if neither parses. */
function parse(source: string): Parsed {
  let moduleError: unknown
  try {
    return { ok: true, program: acorn.parse(source, { ...PARSE_BASE, sourceType: 'module' }), module: true }
  } catch (e) {
    if (isStackOverflow(e)) return tooDeep()
    moduleError = e
  }
  let scriptError: unknown
  try {
    const program = acorn.parse(source, { ...PARSE_BASE, sourceType: 'script', allowReturnOutsideFunction: true })
    return { ok: true, program, module: false }
  } catch (e) {
    if (isStackOverflow(e)) return tooDeep()
    scriptError = e
  }
  // Report whichever attempt got further into the file.
  const m = syntaxErrorInfo(moduleError)
  const s = syntaxErrorInfo(scriptError)
  const best = s.pos > m.pos ? s : m
  return { ok: false, line: best.line, rule: 'parse_error', explanation: `parse error: ${best.message}` }
}

function tooDeep(): Parsed {
  return { ok: false, line: 1, rule: 'too_large', explanation: 'nesting too deep to analyse' }
}

function syntaxErrorInfo(e: unknown): { pos: number; line: number; message: string } {
  const err = e as { pos?: unknown; loc?: { line?: unknown }; message?: unknown }
  return {
    pos: typeof err?.pos === 'number' ? err.pos : -1,
    line: typeof err?.loc?.line === 'number' ? err.loc.line : 1,
    message: typeof err?.message === 'string' ? err.message : String(e),
  }
}

/** Offsets where lines start, with the line terminators ECMAScript (and acorn) count. */
function lineStarts(source: string): number[] {
  const starts = [0]
  const re = /\r\n?|[\n\u2028\u2029]/g
  for (let m = re.exec(source); m !== null; m = re.exec(source)) starts.push(m.index + m[0].length)
  return starts
}

function hasUseStrict(body: ReadonlyArray<Node>): boolean {
  for (const stmt of body) {
    if (stmt.type !== 'ExpressionStatement' || stmt.directive === undefined) return false
    if (stmt.directive === 'use strict') return true
  }
  return false
}

function isFunctionNode(n: Node): n is acorn.FunctionDeclaration | acorn.FunctionExpression {
  return n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression'
}

/** Static property name of a non-computed member / property key. */
function staticKeyName(key: Node): string | null {
  if (key.type === 'Identifier') return key.name
  if (key.type === 'PrivateIdentifier') return `#${key.name}`
  if (key.type === 'Literal' && (typeof key.value === 'string' || typeof key.value === 'number')) return String(key.value)
  return null
}

const COMPARISON = new Set(['===', '!==', '==', '!='])
/** Global functions whose result on a constant is folded to a constant. */
const STRING_DECODERS: Readonly<Record<string, (s: string) => string>> = {
  decodeURIComponent,
  decodeURI,
  unescape,
  String,
}
const FOLD_MAX_LENGTH = 10_000
const FOLD_MAX_DEPTH = 64
const TICK_EVERY = 512

interface BindingContext {
  /** A declaration (const/let/var), as opposed to an assignment. */
  declaration: boolean
  /** Part of an `export` declaration. */
  exported: boolean
}

interface AliasCandidate {
  target: acorn.Pattern
  value: Node
}

class Analyser {
  private readonly findings = new Map<string, { line: number; text: string }>()
  private readonly aliases = new Map<string, string>()
  private readonly aliasCandidates: AliasCandidate[] = []
  /** Lenient constant tracking (name -> assigned expressions, null = non-constant assignment). */
  private readonly constCandidates = new Map<string, Array<Node | null>>()
  private readonly sloppyThis = new Set<Node>()
  /** Every name the file declares somewhere (var/let/const, params, functions, classes, catch, imports). */
  private readonly declared = new Set<string>()
  private readonly strictFoldMemo = new Map<Node, string | null>()
  private readonly lenientFoldMemo = new Map<Node, string | null>()
  private readonly folding = new Set<string>()
  /** Pass 2 memo of resolve(): aliases are final then, and children are visited before parents. */
  private readonly resolveMemo = new Map<Node, string | null>()
  private checking = false
  /** Set when a fold hit the depth cap; such results are not memoised. */
  private foldTruncated = false
  private lines: number[] | null = null
  private readonly strictProgram: boolean
  private ticks = 0

  constructor(
    private readonly file: string,
    private readonly source: string,
    private readonly program: acorn.Program,
    isModule: boolean,
    private readonly deadline: number,
  ) {
    // A file is strict if it is certainly an ES module (it has module syntax)
    // or says so. A module-parsable file without imports/exports may still be
    // run as sloppy CommonJS.
    const hasModuleSyntax = program.body.some(
      (s) =>
        s.type === 'ImportDeclaration' ||
        s.type === 'ExportNamedDeclaration' ||
        s.type === 'ExportDefaultDeclaration' ||
        s.type === 'ExportAllDeclaration',
    )
    this.strictProgram = (isModule && hasModuleSyntax) || hasUseStrict(program.body)
  }

  run(): string[] {
    try {
      this.collect()
      this.solveAliases()
      this.checking = true
      this.check()
    } catch (e) {
      if (e instanceof StopScan) this.add(1, e.rule, e.explanation, true)
      else if (isStackOverflow(e)) this.add(1, 'too_large', 'nesting too deep to analyse', true)
      else this.add(1, 'scan_error', `analyser failure: ${e instanceof Error ? e.message : String(e)}`, true)
    }
    return [...this.findings.values()].sort((a, b) => a.line - b.line).map((f) => f.text)
  }

  // ------------------------------------------------------------ findings

  private add(line: number, rule: RuleId, explanation: string, force = false): void {
    const key = `${line}\u0000${rule}`
    if (this.findings.has(key)) return
    if (!force && this.findings.size >= MAX_FINDINGS_PER_FILE) return
    this.findings.set(key, { line, text: formatFinding(this.file, line, rule, explanation) })
  }

  private report(node: Node, rule: RuleId, explanation: string): void {
    this.add(this.lineOf(node.start), rule, `${explanation}: \`${this.snippet(node)}\``)
  }

  /** 1-based line of a source offset (binary search over line starts, computed once). */
  private lineOf(offset: number): number {
    const lines = (this.lines ??= lineStarts(this.source))
    let lo = 0
    let hi = lines.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (lines[mid]! <= offset) lo = mid
      else hi = mid - 1
    }
    return lo + 1
  }

  private snippet(node: Node): string {
    const text = this.source.slice(node.start, Math.min(node.end, node.start + 200)).replace(/\s+/g, ' ')
    return text.length > 60 ? `${text.slice(0, 57)}...` : text
  }

  private tick(): void {
    if (++this.ticks % TICK_EVERY === 0 && performance.now() > this.deadline) {
      throw new StopScan('timeout', 'analysis exceeded the per-file time limit')
    }
  }

  // ------------------------------------------------------------ pass 1: collect

  private collect(): void {
    walk.fullAncestor(this.program, (node, _state, ancestors) => {
      this.tick()
      switch (node.type) {
        case 'ThisExpression':
          if (!this.strictProgram && this.isSloppyFunctionThis(ancestors)) this.sloppyThis.add(node)
          break
        case 'FunctionDeclaration':
        case 'FunctionExpression':
        case 'ArrowFunctionExpression':
          if (node.id) this.declared.add(node.id.name)
          for (const param of node.params) this.addDeclared(param)
          break
        case 'ClassDeclaration':
        case 'ClassExpression':
          if (node.id) this.declared.add(node.id.name)
          break
        case 'CatchClause':
          if (node.param) this.addDeclared(node.param)
          break
        case 'VariableDeclarator':
          this.addDeclared(node.id)
          if (node.init) {
            this.aliasCandidates.push({ target: node.id, value: node.init })
            if (node.id.type === 'Identifier') this.addConst(node.id.name, node.init)
          }
          break
        case 'AssignmentExpression':
          if (node.operator === '=') this.aliasCandidates.push({ target: node.left, value: node.right })
          if (node.left.type === 'Identifier') this.addConst(node.left.name, node.operator === '=' ? node.right : null)
          break
        case 'ImportDeclaration': {
          for (const spec of node.specifiers) this.declared.add(spec.local.name)
          if (typeof node.source.value !== 'string' || normaliseSpecifier(node.source.value) !== 'process') break
          for (const spec of node.specifiers) {
            if (spec.type === 'ImportSpecifier') {
              const imported = staticKeyName(spec.imported)
              this.setAlias(spec.local.name, imported === null || imported === 'default' ? 'process' : `process.${imported}`)
            } else {
              this.setAlias(spec.local.name, 'process')
            }
          }
          break
        }
        default:
          break
      }
    })
  }

  private addDeclared(pattern: acorn.Pattern): void {
    switch (pattern.type) {
      case 'Identifier':
        this.declared.add(pattern.name)
        return
      case 'ObjectPattern':
        for (const prop of pattern.properties) this.addDeclared(prop.type === 'Property' ? prop.value : prop.argument)
        return
      case 'ArrayPattern':
        for (const el of pattern.elements) if (el) this.addDeclared(el)
        return
      case 'AssignmentPattern':
        this.addDeclared(pattern.left)
        return
      case 'RestElement':
        this.addDeclared(pattern.argument)
        return
      default:
        return
    }
  }

  private addConst(name: string, value: Node | null): void {
    const list = this.constCandidates.get(name)
    if (list) list.push(value)
    else this.constCandidates.set(name, [value])
  }

  /**
   * In sloppy mode a plain function called without a receiver gets the
   * global object as `this` (`(function () { return this })()`). Any
   * non-arrow function outside strict code counts, methods included (they
   * can be detached). Class bodies and 'use strict' functions are strict;
   * top-level `this` is module.exports (CommonJS) or undefined (ESM).
   */
  private isSloppyFunctionThis(ancestors: Node[]): boolean {
    let inFunction = false
    for (let i = ancestors.length - 2; i >= 0; i--) {
      const n = ancestors[i]!
      if (n.type === 'ClassBody' || n.type === 'ClassDeclaration' || n.type === 'ClassExpression') return false
      if (isFunctionNode(n)) {
        if (n.body.type === 'BlockStatement' && hasUseStrict(n.body.body)) return false
        inFunction = true
      }
    }
    return inFunction
  }

  private setAlias(name: string, sym: string): boolean {
    if (this.aliases.has(name)) return false // first binding wins; conflicting ones are findings (pass 2)
    this.aliases.set(name, sym)
    return true
  }

  /** Follows `const a = root`, `a = root`, `const { x: a } = root` to a fixpoint (aliases of aliases). */
  private solveAliases(): void {
    for (let round = 0; round < 16; round++) {
      let changed = false
      for (const c of this.aliasCandidates) {
        this.tick()
        const sym = this.resolve(c.value)
        if (sym !== null && ROOTS.has(sym)) changed = this.bindPattern(c.target, sym) || changed
      }
      if (!changed) return
    }
  }

  private bindPattern(target: acorn.Pattern, sym: string): boolean {
    if (target.type === 'Identifier') return this.setAlias(target.name, sym)
    if (target.type === 'AssignmentPattern') return this.bindPattern(target.left, sym)
    if (target.type !== 'ObjectPattern') return false
    let changed = false
    for (const prop of target.properties) {
      if (prop.type !== 'Property') continue
      const key = prop.computed ? this.foldStrict(prop.key) : staticKeyName(prop.key)
      if (key === null) continue
      const child = this.member(sym, key)
      if (ROOTS.has(child)) changed = this.bindPattern(prop.value, child) || changed
    }
    return changed
  }

  // ------------------------------------------------------------ resolution

  /** `sym.key`, where a member of the global object is the global of that name. */
  private member(sym: string, key: string): string {
    if (sym === 'globalThis') return GLOBAL_OBJECT_NAMES.has(key) ? 'globalThis' : key
    // `import * as p from 'node:process'`: p.default is process itself (found by review: p.default.env scanned clean).
    if (sym === 'process' && key === 'default') return 'process'
    return `${sym}.${key}`
  }

  /**
   * Symbolic path of an expression, or null when it is nothing the rules
   * care about. Only identifiers and members of roots get a path.
   */
  private resolve(node: Node, depth = 0): string | null {
    if (!this.checking) return depth > FOLD_MAX_DEPTH ? null : this.resolveUncached(node, depth)
    const cached = this.resolveMemo.get(node)
    if (cached !== undefined) return cached
    // Cannot happen in pass 2 (children are memoised first); refuse rather than guess.
    if (depth > FOLD_MAX_DEPTH) throw new StopScan('too_large', 'expression nesting too deep to analyse')
    const value = this.resolveUncached(node, depth)
    this.resolveMemo.set(node, value)
    return value
  }

  private resolveUncached(node: Node, depth: number): string | null {
    switch (node.type) {
      case 'Identifier':
        return this.aliases.get(node.name) ?? (GLOBAL_OBJECT_NAMES.has(node.name) ? 'globalThis' : node.name)
      case 'ThisExpression':
        return this.sloppyThis.has(node) ? 'globalThis' : null
      case 'MemberExpression': {
        if (node.object.type === 'Super') return null
        const obj = this.resolve(node.object, depth + 1)
        if (obj === null || !ROOTS.has(obj)) return null
        const key = this.memberKeyStrict(node)
        return key === null ? null : this.member(obj, key)
      }
      case 'ChainExpression':
        return this.resolve(node.expression, depth + 1)
      case 'SequenceExpression': {
        const last = node.expressions[node.expressions.length - 1]
        return last ? this.resolve(last, depth + 1) : null
      }
      case 'AssignmentExpression':
        return node.operator === '=' ? this.resolve(node.right, depth + 1) : null
      case 'CallExpression': {
        // require('process') / require('node:process') is process. The
        // argument is looked at first so builder chains do not recurse.
        const arg = node.arguments[0]
        if (node.callee.type === 'Super' || !arg || arg.type === 'SpreadElement') return null
        const spec = this.foldStrict(arg)
        if (spec === null || normaliseSpecifier(spec) !== 'process') return null
        const callee = this.resolve(node.callee, depth + 1)
        return callee !== null && REQUIRE_LIKE.has(callee) ? 'process' : null
      }
      default:
        return null
    }
  }

  /** Property name of a member expression when it is a syntactic constant. */
  private memberKeyStrict(node: acorn.MemberExpression): string | null {
    return node.computed ? this.foldStrict(node.property) : staticKeyName(node.property)
  }

  /** Same, also folding through variables (only used to find more, never to allow). */
  private memberKeyLenient(node: acorn.MemberExpression): string | null {
    return node.computed ? this.foldLenient(node.property) : staticKeyName(node.property)
  }

  private foldStrict(node: Node): string | null {
    return this.fold(node, false, 0)
  }

  private foldLenient(node: Node): string | null {
    return this.fold(node, true, 0)
  }

  /**
   * Constant string value of an expression: literals, templates and `+` of
   * constants, `.concat`, `[...].join`, case changes, decodeURIComponent /
   * unescape of constants. With `viaConsts`, identifiers assigned exactly
   * one constant anywhere in the file fold too (not scope-aware, so only
   * used to add findings).
   */
  private fold(node: Node, viaConsts: boolean, depth: number): string | null {
    const memo = viaConsts ? this.lenientFoldMemo : this.strictFoldMemo
    const cached = memo.get(node)
    if (cached !== undefined) return cached
    if (depth > FOLD_MAX_DEPTH) {
      this.foldTruncated = true
      return null
    }
    const outer = this.foldTruncated
    this.foldTruncated = false
    const value = this.foldUncached(node, viaConsts, depth)
    const capped = value !== null && value.length > FOLD_MAX_LENGTH ? null : value
    if (node.type !== 'Identifier' && !this.foldTruncated) memo.set(node, capped)
    this.foldTruncated = this.foldTruncated || outer
    return capped
  }

  private foldUncached(node: Node, viaConsts: boolean, depth: number): string | null {
    const sub = (n: Node): string | null => this.fold(n, viaConsts, depth + 1)
    switch (node.type) {
      case 'Literal':
        if (typeof node.value === 'string' || typeof node.value === 'number' || typeof node.value === 'boolean') {
          return String(node.value)
        }
        return node.value === null && node.raw === 'null' ? 'null' : null
      case 'TemplateLiteral': {
        let out = ''
        for (let i = 0; i < node.quasis.length; i++) {
          const cooked = node.quasis[i]!.value.cooked
          if (cooked === null || cooked === undefined) return null
          out += cooked
          const expr = node.expressions[i]
          if (expr) {
            const v = sub(expr)
            if (v === null) return null
            out += v
          }
          if (out.length > FOLD_MAX_LENGTH) return null
        }
        return out
      }
      case 'BinaryExpression': {
        if (node.operator !== '+' || node.left.type === 'PrivateIdentifier') return null
        const l = sub(node.left)
        if (l === null) return null
        const r = sub(node.right)
        return r === null ? null : l + r
      }
      case 'SequenceExpression': {
        const last = node.expressions[node.expressions.length - 1]
        return last ? sub(last) : null
      }
      case 'Identifier': {
        if (!viaConsts) return null
        const list = this.constCandidates.get(node.name)
        const only = list && list.length === 1 ? list[0] : null
        if (!only || this.folding.has(node.name)) return null
        this.folding.add(node.name)
        try {
          return sub(only)
        } finally {
          this.folding.delete(node.name)
        }
      }
      case 'CallExpression':
        return this.foldCall(node, sub)
      default:
        return null
    }
  }

  private foldCall(node: acorn.CallExpression, sub: (n: Node) => string | null): string | null {
    const args: Node[] = []
    for (const a of node.arguments) {
      if (a.type === 'SpreadElement') return null
      args.push(a)
    }
    const callee = node.callee
    if (callee.type === 'Identifier') {
      const decode = Object.hasOwn(STRING_DECODERS, callee.name) ? STRING_DECODERS[callee.name] : undefined
      const arg = args[0]
      if (!decode || !arg) return null
      const v = sub(arg)
      if (v === null) return null
      try {
        return decode(v)
      } catch {
        return null
      }
    }
    if (callee.type !== 'MemberExpression') return null
    const method = callee.computed ? null : staticKeyName(callee.property)
    if (callee.object.type === 'Super') return null
    if (method === 'join' && callee.object.type === 'ArrayExpression') {
      const parts: string[] = []
      for (const el of callee.object.elements) {
        if (el === null || el.type === 'SpreadElement') return null
        const v = sub(el)
        if (v === null) return null
        parts.push(v)
      }
      const sep = args[0] ? sub(args[0]) : ','
      return sep === null ? null : parts.join(sep)
    }
    if (method === 'concat' || method === 'toLowerCase' || method === 'toUpperCase' || method === 'trim') {
      const base = sub(callee.object)
      if (base === null) return null
      if (method === 'toLowerCase') return base.toLowerCase()
      if (method === 'toUpperCase') return base.toUpperCase()
      if (method === 'trim') return base.trim()
      let out = base
      for (const a of args) {
        const v = sub(a)
        if (v === null) return null
        out += v
      }
      return out
    }
    return null
  }

  /** Finding for a resolved path, if the path itself is banned. */
  private symFinding(sym: string): readonly [RuleId, string] | null {
    const banned = BANNED.get(sym)
    if (banned) return banned
    if (sym.startsWith('module.')) {
      const name = sym.slice('module.'.length)
      if (!MODULE_ALLOWED_MEMBERS.has(name) && name !== 'require') {
        return ['dynamic_import', `module.${name} reaches the module system`]
      }
    }
    return null
  }

  // ------------------------------------------------------------ pass 2: check

  private check(): void {
    walk.fullAncestor(this.program, (node, _state, ancestors, type) => {
      this.tick()
      const parent = ancestors.length >= 2 ? ancestors[ancestors.length - 2]! : null
      switch (node.type) {
        case 'Identifier':
          this.checkEscapedIdentifier(node)
          if (type === 'VariablePattern') return // a binding, not a reference
          if (parent?.type === 'ExportAllDeclaration') return // `export * as name from`
          if (node.name === 'arguments' && !ancestors.some(isFunctionNode)) {
            this.report(node, 'dynamic_import', 'top-level arguments are the CommonJS wrapper arguments, require included')
          }
          this.checkValue(node, parent, ancestors)
          return
        case 'ThisExpression':
        case 'ChainExpression':
        case 'SequenceExpression':
        case 'AssignmentExpression':
          this.checkValue(node, parent, ancestors)
          return
        case 'MemberExpression':
          this.checkMember(node)
          this.checkValue(node, parent, ancestors)
          return
        case 'CallExpression':
          this.checkCall(node)
          this.checkValue(node, parent, ancestors)
          this.checkMagic(node, parent)
          return
        case 'NewExpression':
          this.checkNew(node)
          return
        case 'ImportExpression':
          this.checkModuleArgument(node, node.source)
          this.checkProcessHandedOut(node, node.source, "import('process') hands out process where the analyser cannot follow it")
          return
        case 'ImportDeclaration':
          this.checkSpecifier(node, node.source)
          this.checkProcessImports(node)
          return
        case 'ExportNamedDeclaration':
          if (node.source) {
            this.checkSpecifier(node, node.source)
            this.checkProcessHandedOut(node, node.source, 're-exporting process hands it to other files, where the analyser cannot follow it')
          } else this.checkExportedNames(node)
          return
        case 'ExportAllDeclaration':
          this.checkSpecifier(node, node.source)
          this.checkProcessHandedOut(node, node.source, 're-exporting process hands it to other files, where the analyser cannot follow it')
          return
        case 'Literal':
          if (typeof node.value === 'string') {
            if (node.raw !== undefined && isEscapeObfuscated(node.raw)) {
              this.report(node, 'obfuscation_escapes', 'string literal made mostly of escape sequences')
            }
            if (isHighEntropy(node.value)) {
              this.report(node, 'obfuscation_entropy', `${node.value.length}-character high-entropy string literal`)
            }
            this.checkMagic(node, parent)
          }
          return
        case 'TemplateElement':
          if (isEscapeObfuscated(node.value.raw)) {
            this.report(node, 'obfuscation_escapes', 'template text made mostly of escape sequences')
          }
          if (typeof node.value.cooked === 'string' && isHighEntropy(node.value.cooked)) {
            this.report(node, 'obfuscation_entropy', `${node.value.cooked.length}-character high-entropy template text`)
          }
          return
        case 'TemplateLiteral':
        case 'BinaryExpression':
          this.checkMagic(node, parent)
          return
        case 'WithStatement':
          this.report(node, 'with_statement', 'with statements hide which names are read (e.g. with (process) env)')
          return
        case 'ObjectPattern':
          for (const prop of node.properties) {
            if (prop.type !== 'Property') continue
            const key = prop.computed ? this.foldLenient(prop.key) : staticKeyName(prop.key)
            const hit = key === null ? undefined : BANNED_PROPERTIES.get(key)
            if (hit) this.report(prop, hit[0], hit[1])
          }
          return
        default:
          return
      }
    })
  }

  private checkEscapedIdentifier(node: acorn.Identifier): void {
    if (this.source.charCodeAt(node.start) === 92 || this.source.slice(node.start, node.end).includes('\\')) {
      this.report(node, 'obfuscation_escapes', `identifier written with unicode escapes (reads as ${node.name})`)
    }
  }

  /**
   * Banned values anywhere they are referenced; roots wherever they are used
   * in a way the alias tracking does not follow.
   */
  private checkValue(node: Node, parent: Node | null, ancestors: Node[]): void {
    const sym = this.resolve(node)
    if (sym === null) return
    const hit = this.symFinding(sym)
    if (hit) {
      if (parent?.type === 'UnaryExpression' && parent.operator === 'typeof') return
      if (sym === 'Function' && parent?.type === 'BinaryExpression' && parent.operator === 'instanceof' && parent.right === node) return
      if (REQUIRE_LIKE.has(sym) && parent?.type === 'CallExpression' && parent.callee === node) return // checked as a call
      this.report(node, hit[0], hit[1])
      return
    }
    const escapeRule = ROOTS.get(sym)
    if (escapeRule === undefined) return
    const why = this.rootUseProblem(node, sym, parent, ancestors)
    if (why !== null && escapeRule !== null) this.report(node, escapeRule, why)
  }

  /** Null when this use of a root is followed by the analysis; otherwise why it is not. */
  private rootUseProblem(node: Node, sym: string, parent: Node | null, ancestors: Node[]): string | null {
    const what = sym === 'globalThis' ? 'the global object' : sym
    if (parent === null) return null
    switch (parent.type) {
      case 'MemberExpression':
        if (parent.object === node) return null // the member itself is checked
        break
      case 'ChainExpression':
        return null // the chain is checked as a whole
      case 'SequenceExpression':
        return null // discarded, or the sequence is checked as a whole
      case 'ExpressionStatement':
        return null
      case 'UnaryExpression':
        if (parent.operator === 'typeof' || parent.operator === 'void' || parent.operator === 'delete') return null
        if (parent.operator === '!') return null
        break
      case 'IfStatement':
      case 'WhileStatement':
      case 'DoWhileStatement':
      case 'ForStatement':
      case 'ConditionalExpression':
        if (parent.test === node) return null // only its truthiness is used
        break
      case 'BinaryExpression':
        if (COMPARISON.has(parent.operator) || parent.operator === 'instanceof') return null
        if (parent.operator === 'in' && parent.right === node) return null // 'x' in globalThis
        break
      case 'AssignmentExpression':
        if (parent.left === node) return null // assigning to it, not reading it
        if (parent.operator !== '=') break
        // The assignment expression's own value is checked separately.
        return this.bindingProblem(parent.left, sym, what, { declaration: false, exported: false })
      case 'VariableDeclarator': {
        if (parent.init !== node) return null
        // `export const p = process` hands the root to other files.
        const n = ancestors.length
        const exported = ancestors[n - 3]?.type === 'VariableDeclaration' && ancestors[n - 4]?.type === 'ExportNamedDeclaration'
        return this.bindingProblem(parent.id, sym, what, { declaration: true, exported })
      }
      case 'UpdateExpression':
      case 'ArrayPattern':
      case 'ObjectPattern':
      case 'RestElement':
        return null // assignment target
      case 'AssignmentPattern':
        if (parent.left === node) return null
        break
      case 'ForInStatement':
      case 'ForOfStatement':
        if (parent.left === node) return null
        break
      default:
        break
    }
    return `${what} is used as a value the analyser cannot follow`
  }

  /**
   * Checks `target = root`: a consistent simple alias or a destructuring the
   * analyser follows, local to this file (not exported, not an implicit
   * global that another file could read).
   */
  private bindingProblem(target: acorn.Pattern, sym: string, what: string, ctx: BindingContext): string | null {
    if (target.type === 'Identifier') {
      if (ctx.exported) return `${what} is exported as ${target.name}`
      if (!ctx.declaration && !this.declared.has(target.name)) {
        return `${what} is assigned to ${target.name}, which is not declared in this file (an implicit global)`
      }
      const alias = this.aliases.get(target.name)
      if (alias === sym) return null
      return alias === undefined
        ? `${what} is assigned to ${target.name} in a way the alias tracking does not follow`
        : `${what} is assigned to ${target.name}, which also holds ${alias === 'globalThis' ? 'the global object' : alias}`
    }
    if (target.type === 'ObjectPattern') return this.checkDestructuring(target, sym, what, ctx)
    return `${what} is stored where the analyser cannot follow it`
  }

  /** `const { a, b: { c } } = root`: every key is resolved and checked. */
  private checkDestructuring(pattern: acorn.ObjectPattern, sym: string, what: string, ctx: BindingContext): string | null {
    for (const prop of pattern.properties) {
      if (prop.type === 'RestElement') return `${what} is copied by a rest pattern`
      const key = prop.computed ? this.foldStrict(prop.key) : staticKeyName(prop.key)
      if (key === null) return `${what} is destructured with a computed key`
      const child = this.member(sym, key)
      const hit = this.symFinding(child)
      if (hit) {
        this.report(prop, hit[0], `${hit[1]} (destructured)`)
        continue
      }
      if (!ROOTS.has(child)) continue
      let target = prop.value
      if (target.type === 'AssignmentPattern') target = target.left
      const childWhat = child === 'globalThis' ? 'the global object' : child
      const problem = this.bindingProblem(target, child, childWhat, ctx)
      if (problem !== null) {
        const rule = ROOTS.get(child)
        if (rule) this.report(prop, rule, problem)
      }
    }
    return null
  }

  private checkMember(node: acorn.MemberExpression): void {
    if (!node.computed && node.property.type === 'Identifier') this.checkEscapedIdentifier(node.property)
    const key = this.memberKeyLenient(node)
    if (key !== null) {
      const hit = BANNED_PROPERTIES.get(key)
      if (hit && !(key === 'constructor' && node.object.type === 'ThisExpression')) this.report(node, hit[0], hit[1])
    }
    if (node.object.type === 'Super') return
    if (this.memberKeyStrict(node) !== null) return
    const obj = this.resolve(node.object)
    const rule = obj === null ? undefined : ROOTS.get(obj)
    if (rule) {
      const what = obj === 'globalThis' ? 'the global object' : obj
      this.report(node, rule, `${what} accessed with a non-constant key`)
    }
  }

  private calleeName(callee: Node): string | null {
    if (callee.type === 'Identifier') return callee.name
    if (callee.type === 'MemberExpression') return this.memberKeyLenient(callee)
    if (callee.type === 'ChainExpression') return this.calleeName(callee.expression)
    return null
  }

  private checkCall(node: acorn.CallExpression): void {
    if (node.callee.type === 'Super') return
    const calleeSym = this.resolve(node.callee)
    if (calleeSym !== null && REQUIRE_LIKE.has(calleeSym)) this.checkModuleArgument(node, node.arguments[0])
    const name = this.calleeName(node.callee)
    const bare = node.callee.type === 'Identifier'
    if (name !== null && (bare ? isBareFileWriteCall(name) : FILE_WRITE_CALLS.has(name))) {
      this.report(node, 'file_write', `${name}() writes or removes files`)
    }
    if (name !== null && OPEN_CALLS.has(name)) this.checkOpenFlags(node, name)
    const timer = calleeSym !== null && STRING_TIMERS.has(calleeSym)
    const first = node.arguments[0]
    if (timer && first && first.type !== 'SpreadElement' && this.foldLenient(first) !== null) {
      this.report(node, 'eval', `${calleeSym}() with a string evaluates it as code`)
    }
    if (calleeSym === 'Buffer.from') this.checkBufferEncoding(node)
  }

  private checkNew(node: acorn.NewExpression): void {
    if (this.resolve(node.callee) === 'Buffer') this.checkBufferEncoding(node)
    const name = this.calleeName(node.callee)
    const bare = node.callee.type === 'Identifier'
    if (name !== null && (bare ? isBareFileWriteCall(name) : FILE_WRITE_CALLS.has(name))) {
      this.report(node, 'file_write', `${name} writes or removes files`)
    }
  }

  /**
   * Flags every base64 decode rather than tracing whether the result reaches
   * eval/Function/require/import: those sinks are already rejected on their
   * own, so a decode only matters as a way to hide strings, and tracing data
   * flow soundly through arbitrary code is not possible statically.
   */
  private checkBufferEncoding(node: acorn.CallExpression | acorn.NewExpression): void {
    // Buffer.from(string, encoding) takes exactly two arguments; three are
    // Buffer.from(arrayBuffer, byteOffset, length).
    const enc = node.arguments[1]
    if (!enc || node.arguments.length !== 2) return
    const value = enc.type === 'SpreadElement' ? null : this.foldStrict(enc)
    if (value === null) this.report(node, 'base64_decode', 'Buffer.from with a non-constant encoding may decode base64')
    else if (isBase64Encoding(value)) this.report(node, 'base64_decode', 'Buffer.from(..., "base64") decodes a hidden payload')
  }

  private checkOpenFlags(node: acorn.CallExpression, name: string): void {
    const flags = node.arguments[1]
    if (!flags || flags.type === 'SpreadElement') return
    const value = this.foldStrict(flags)
    if (value !== null && isWriteFlag(value)) {
      this.report(node, 'file_write', `${name}() with flag '${value}' opens a file for writing`)
      return
    }
    let constant = false
    walk.simple(flags, {
      MemberExpression: (m) => {
        const k = staticKeyName(m.property)
        if (!m.computed && k !== null && isWriteConstant(k)) constant = true
      },
      Identifier: (id) => {
        if (isWriteConstant(id.name)) constant = true
      },
    })
    if (constant) this.report(node, 'file_write', `${name}() with a write flag constant opens a file for writing`)
  }

  private checkModuleArgument(node: Node, arg: Node | undefined): void {
    if (arg === undefined) return
    const spec = arg.type === 'SpreadElement' ? null : this.foldStrict(arg)
    if (spec === null) {
      this.report(node, 'dynamic_import', 'module loaded with a non-constant specifier')
      return
    }
    const why = forbiddenModuleReason(spec, this.file)
    if (why !== null) this.report(node, 'forbidden_module', `'${spec}' is forbidden (${why})`)
  }

  private checkSpecifier(node: Node, source: acorn.Literal): void {
    if (typeof source.value !== 'string') return
    const why = forbiddenModuleReason(source.value, this.file)
    if (why !== null) this.report(node, 'forbidden_module', `'${source.value}' is forbidden (${why})`)
  }

  /** `export { p }` where p holds a root hands it to other files. */
  private checkExportedNames(node: acorn.ExportNamedDeclaration): void {
    for (const spec of node.specifiers) {
      if (spec.local.type !== 'Identifier') continue
      const sym = this.aliases.get(spec.local.name) ?? (GLOBAL_OBJECT_NAMES.has(spec.local.name) ? 'globalThis' : null)
      const rule = sym === null ? undefined : ROOTS.get(sym)
      if (sym !== null && rule) {
        this.report(spec, rule, `${sym === 'globalThis' ? 'the global object' : sym} is exported as ${this.snippet(spec)}`)
      }
    }
  }

  /**
   * `import('node:process')` and `export … from 'node:process'` give the
   * process object to code that reads it as `m.default`, `m[key]` or another
   * file's import, none of which is tracked as process (found by review:
   * `(await import('node:process')).default.getBuiltinModule(…)` and
   * `….env` scanned clean). Only static imports and require are followed;
   * these are refused. A non-constant specifier is dynamic_import already.
   */
  private checkProcessHandedOut(node: Node, source: Node, explanation: string): void {
    const spec = this.foldStrict(source)
    if (spec !== null && normaliseSpecifier(spec) === 'process') this.report(node, 'process_env', explanation)
  }

  /** `import { env } from 'node:process'` and friends. */
  private checkProcessImports(node: acorn.ImportDeclaration): void {
    if (typeof node.source.value !== 'string' || normaliseSpecifier(node.source.value) !== 'process') return
    for (const spec of node.specifiers) {
      if (spec.type !== 'ImportSpecifier') continue
      const imported = staticKeyName(spec.imported)
      if (imported === null || imported === 'default') continue
      const hit = this.symFinding(`process.${imported}`)
      if (hit) this.report(spec, hit[0], `${hit[1]} (imported)`)
    }
  }

  /**
   * Strings that name banned members ('constructor', 'eval', ...), however
   * they are built from constants, unless they are only compared. Parts of
   * a larger constant are judged on their own too (children are folded
   * before parents, which keeps folding linear).
   */
  private checkMagic(node: Node, parent: Node | null): void {
    if (node.type === 'BinaryExpression' && node.operator !== '+') return
    const value = this.foldLenient(node)
    if (value === null) return
    if (parent !== null) {
      if (parent.type === 'BinaryExpression' && COMPARISON.has(parent.operator)) return
      if (parent.type === 'BinaryExpression' && parent.operator === 'in' && parent.left === node) return
      if (parent.type === 'SwitchCase' && parent.test === node) return
      if (parent.type === 'Property' && parent.value === node && !parent.computed) return
    }
    const hit = MAGIC_STRINGS.get(value)
    if (hit) this.report(node, hit[0], hit[1])
  }
}

/**
 * A `.json` file is data: Node loads it with JSON.parse whether it is
 * required or imported (with `{ type: 'json' }`), so it cannot run. It must
 * still be valid JSON, and its strings get the entropy rule.
 */
function analyseJson(file: string, source: string): string[] {
  let value: unknown
  try {
    value = JSON.parse(source)
  } catch (e) {
    if (e instanceof RangeError) return [formatFinding(file, 1, 'too_large', 'nesting too deep to analyse')]
    const message = e instanceof Error ? e.message : String(e)
    const pos = /position (\d+)/.exec(message)
    const line = pos ? source.slice(0, Number(pos[1])).split(/\r\n?|\n/).length : 1
    return [formatFinding(file, line, 'parse_error', `parse error: invalid JSON: ${message}`)]
  }
  const findings: string[] = []
  const stack: unknown[] = [value]
  while (stack.length > 0 && findings.length < MAX_FINDINGS_PER_FILE) {
    const v = stack.pop()
    if (typeof v === 'string') {
      if (isHighEntropy(v)) {
        findings.push(formatFinding(file, 1, 'obfuscation_entropy', `${v.length}-character high-entropy JSON string`))
      }
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item)
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) stack.push(k, child)
    }
  }
  return findings
}

/**
 * Analyses one file. Returns findings "<file>:<line>: <rule-id>: <explanation>"
 * (empty when the file passes). Never throws for any input: failures become
 * findings (parse_error, too_large, timeout, scan_error).
 *
 * `limits.timeoutMs` is checked cooperatively during the walk; parsing
 * itself cannot be interrupted, which is why the pool also aborts the
 * worker from outside.
 */
export function analyseSource(file: string, source: string, limits?: Partial<ScanLimits>): string[] {
  return analyseFile(file, source, limits).findings
}

/** What the scan learns about one file: its findings, and the modules it asks for (for the import resolver). */
export interface FileAnalysis {
  findings: string[]
  requests: ModuleRequest[]
}

/** analyseSource, plus the file's module requests (none for JSON or a file that does not parse). */
export function analyseFile(file: string, source: string, limits?: Partial<ScanLimits>): FileAnalysis {
  const maxBytes = limits?.maxBytes ?? DEFAULT_LIMITS.maxBytes
  const timeoutMs = limits?.timeoutMs ?? DEFAULT_LIMITS.timeoutMs
  const started = performance.now()
  const bytes = Buffer.byteLength(source, 'utf8')
  if (bytes > maxBytes) {
    return { findings: [formatFinding(file, 1, 'too_large', `${bytes} bytes exceeds the ${maxBytes}-byte limit; not parsed`)], requests: [] }
  }
  if (/\.json$/i.test(file)) return { findings: analyseJson(file, source), requests: [] }
  let parsed: Parsed
  try {
    parsed = parse(source)
  } catch (e) {
    return { findings: [formatFinding(file, 1, 'scan_error', `parser failure: ${e instanceof Error ? e.message : String(e)}`)], requests: [] }
  }
  if (!parsed.ok) return { findings: [formatFinding(file, parsed.line, parsed.rule, parsed.explanation)], requests: [] }
  if (performance.now() - started > timeoutMs) {
    return { findings: [formatFinding(file, 1, 'timeout', 'parsing exceeded the per-file time limit')], requests: [] }
  }
  const findings = new Analyser(file, source, parsed.program, parsed.module, started + timeoutMs).run()
  let requests: ModuleRequest[]
  try {
    requests = moduleRequests(parsed.program)
  } catch (e) {
    return { findings: [...findings, formatFinding(file, 1, isStackOverflow(e) ? 'too_large' : 'scan_error', 'module requests could not be listed')], requests: [] }
  }
  return { findings, requests }
}
