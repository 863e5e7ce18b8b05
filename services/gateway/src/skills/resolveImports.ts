// Every file a skill's entry can load, following Node's own resolution, so
// that registration can insist each one is declared in the manifest (and so
// hashed and scanned). Pure: it sees the skill folder through `tree` (what
// exists on disk, symlinks already refused) and the declared files' sources;
// the module requests of each declared file come from the scan worker.
//
// What counts as reachable:
// - `import`/`export from`/`import()` with a relative specifier: exactly that
//   file (ES modules do not add extensions or look into directories);
// - `require()` with a relative specifier: Node's CommonJS order (the file,
//   then .js/.json/.node, then the directory's package.json `main`, then its
//   index.js/.json/.node);
// - a bare specifier: node_modules/<package> in the file's directory or any
//   parent inside the skill folder, through its package.json (`exports`
//   string or conditions, else `main`, else index.js);
// - every package.json consulted on the way, and the nearest package.json
//   of each .js file (Node reads its "type").
// Built-in modules are not files; what the analyser forbids among them (and
// URLs, absolute paths, paths out of the folder) it reports itself.
import { builtinModules } from 'node:module'
import { posix } from 'node:path'
import type { ModuleRequest } from './scan/moduleRequests.js'

/** How deep a package's `exports` may nest conditions and fallbacks (real ones: two or three levels). */
export const MAX_EXPORTS_DEPTH = 32

export type TreeEntry = 'file' | 'dir'

export interface ImportProblem {
  /** The declared file that asks. */
  from: string
  specifier: string
  /** The file it reaches, when there is one. */
  file: string | null
  message: string
}

export interface ResolveInput {
  entry: string
  /** Declared files (path -> text), all hash-checked. */
  declared: ReadonlyMap<string, string>
  /** Module requests of each declared file. */
  requests: ReadonlyMap<string, readonly ModuleRequest[]>
  /** Every file and directory in the skill folder, by relative path. */
  tree: ReadonlyMap<string, TreeEntry>
}

export interface ResolveResult {
  /** Declared files the entry can reach, entry first. */
  reachable: string[]
  problems: ImportProblem[]
}

const BUILTINS = new Set(builtinModules)
const JS_FILE = /\.(?:js|mjs|cjs)$/
const REQUIRE_EXTENSIONS = ['.js', '.json', '.node']

interface Resolution {
  /** package.json files read on the way. */
  consulted: string[]
  target: string | null
  /** Why there is no target. */
  failure?: string
}

function parentDirs(file: string): string[] {
  const out: string[] = []
  let dir = posix.dirname(file)
  for (;;) {
    out.push(dir === '.' ? '' : dir)
    if (dir === '.' || dir === '') return out
    dir = posix.dirname(dir)
  }
}

const join = (...parts: string[]) => posix.join(...parts.filter((p) => p !== ''))

export function resolveImports(input: ResolveInput): ResolveResult {
  const { tree, declared } = input
  const isFile = (p: string) => tree.get(p) === 'file'
  const isDir = (p: string) => tree.get(p) === 'dir'
  const problems: ImportProblem[] = []
  const reported = new Set<string>()
  const problem = (p: ImportProblem) => {
    const key = `${p.from}\0${p.specifier}\0${p.file ?? ''}`
    if (!reported.has(key)) {
      reported.add(key)
      problems.push(p)
    }
  }

  /** A package.json's fields; null when it cannot be read (undeclared or invalid: reported by the caller). */
  const packageJson = (file: string): Record<string, unknown> | null => {
    const text = declared.get(file)
    if (text === undefined) return null
    try {
      const v: unknown = JSON.parse(text)
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null
    } catch {
      return null
    }
  }

  const loadAsFile = (x: string): string | null => {
    if (isFile(x)) return x
    for (const ext of REQUIRE_EXTENSIONS) if (isFile(x + ext)) return x + ext
    return null
  }
  const loadIndex = (x: string): string | null => {
    for (const ext of REQUIRE_EXTENSIONS) if (isFile(join(x, 'index' + ext))) return join(x, 'index' + ext)
    return null
  }
  /** Node's LOAD_AS_DIRECTORY (require) and legacy main resolution (import of a package without exports). */
  const loadAsDirectory = (x: string, consulted: string[]): string | null => {
    const pj = join(x, 'package.json')
    if (isFile(pj)) {
      consulted.push(pj)
      const main = packageJson(pj)?.main
      if (typeof main === 'string' && main !== '') {
        const m = join(x, main)
        const found = loadAsFile(m) ?? loadIndex(m)
        if (found) return found
      }
    }
    return loadIndex(x)
  }

  /**
   * The target of a package's `exports` for the root subpath and these
   * conditions. Nested at most MAX_EXPORTS_DEPTH deep: found by review, an
   * `exports` of arrays 100,000 deep (200 KB, within the limits) overflowed
   * the stack here and registration answered 500; deeper is no target.
   */
  const exportsTarget = (exp: unknown, conditions: string[], depth = 0): string | null => {
    if (depth > MAX_EXPORTS_DEPTH) return null
    if (typeof exp === 'string') return exp
    if (Array.isArray(exp)) {
      for (const e of exp) {
        const t = exportsTarget(e, conditions, depth + 1)
        if (t) return t
      }
      return null
    }
    if (typeof exp !== 'object' || exp === null) return null
    const record = exp as Record<string, unknown>
    if ('.' in record) return exportsTarget(record['.'], conditions, depth + 1)
    for (const [key, value] of Object.entries(record)) {
      if (key === 'default' || conditions.includes(key)) {
        const t = exportsTarget(value, conditions, depth + 1)
        if (t) return t
      }
    }
    return null
  }

  const resolveBare = (from: string, req: ModuleRequest): Resolution => {
    const parts = req.specifier.split('/')
    const nameLength = req.specifier.startsWith('@') ? 2 : 1
    const pkgName = parts.slice(0, nameLength).join('/')
    const subpath = parts.slice(nameLength).join('/')
    const consulted: string[] = []
    for (const dir of parentDirs(from)) {
      if (posix.basename(dir) === 'node_modules') continue
      const pkgDir = join(dir, 'node_modules', pkgName)
      if (!isDir(pkgDir)) continue
      const pj = join(pkgDir, 'package.json')
      const manifest = isFile(pj) ? (consulted.push(pj), packageJson(pj)) : null
      if (subpath !== '') {
        const target = join(pkgDir, subpath)
        const found = req.kind === 'require' ? (loadAsFile(target) ?? loadAsDirectory(target, consulted)) : isFile(target) ? target : null
        return found ? { consulted, target: found } : { consulted, target: null, failure: `${pkgName} has no file ${subpath}` }
      }
      const exported = manifest && 'exports' in manifest ? exportsTarget(manifest.exports, req.kind === 'require' ? ['require', 'node'] : ['import', 'node']) : null
      if (exported !== null) {
        const target = join(pkgDir, exported)
        return isFile(target) ? { consulted, target } : { consulted, target: null, failure: `${pkgName}'s exports point at ${exported}, which is not in the skill folder` }
      }
      const found = loadAsDirectory(pkgDir, [])
      return found ? { consulted, target: found } : { consulted, target: null, failure: `${pkgName} has no main file or index.js` }
    }
    return { consulted, target: null, failure: `package ${pkgName} is not in a node_modules folder inside the skill` }
  }

  const resolveRequest = (from: string, req: ModuleRequest): Resolution | 'not_a_file' => {
    const spec = req.specifier
    if (spec.startsWith('node:') || BUILTINS.has(spec)) return 'not_a_file'
    // URLs, absolute paths and paths out of the folder: rejected by the analyser.
    if (/^[a-z][a-z0-9+.-]*:/i.test(spec) || spec.startsWith('/') || spec.startsWith('\\')) return 'not_a_file'
    if (spec.startsWith('#')) return { consulted: [], target: null, failure: 'package imports (#…) are not supported in skills' }
    if (spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../')) {
      const target = posix.normalize(join(posix.dirname(from), spec)).replace(/\/$/, '')
      if (target === '..' || target.startsWith('../')) return 'not_a_file'
      const rel = target === '.' ? '' : target
      if (req.kind === 'import') {
        if (isFile(rel)) return { consulted: [], target: rel }
        const hint = loadAsFile(rel) ?? (isDir(rel) ? loadIndex(rel) : null)
        return { consulted: [], target: null, failure: `no file ${rel || '.'}${hint ? ` (an ES import names the file exactly: ${hint}?)` : ''}` }
      }
      const consulted: string[] = []
      const found = loadAsFile(rel) ?? (isDir(rel) ? loadAsDirectory(rel, consulted) : null)
      return found ? { consulted, target: found } : { consulted, target: null, failure: `no file or directory ${rel || '.'}` }
    }
    return resolveBare(from, req)
  }

  const reachable: string[] = []
  const queued = new Set<string>()
  /** A file the entry can reach: declared -> followed; not declared -> a problem naming it. */
  const reach = (from: string, specifier: string, file: string) => {
    if (!declared.has(file)) {
      problem({ from, specifier, file, message: `${from} loads ${file} (${specifier}), which is not declared in the manifest's files` })
      return
    }
    if (!queued.has(file)) {
      queued.add(file)
      reachable.push(file)
    }
  }

  if (!declared.has(input.entry)) {
    problem({ from: input.entry, specifier: input.entry, file: input.entry, message: `the entry ${input.entry} is not declared in the manifest's files` })
    return { reachable, problems }
  }
  queued.add(input.entry)
  reachable.push(input.entry)
  for (let i = 0; i < reachable.length; i++) {
    const file = reachable[i]!
    if (file.endsWith('.js')) {
      // The nearest package.json decides whether a .js file is an ES module.
      const scope = parentDirs(file).map((d) => join(d, 'package.json')).find(isFile)
      if (scope) reach(file, '(package scope)', scope)
    }
    if (!JS_FILE.test(file)) continue
    for (const req of input.requests.get(file) ?? []) {
      const r = resolveRequest(file, req)
      if (r === 'not_a_file') continue
      for (const pj of r.consulted) {
        reach(file, req.specifier, pj)
        if (declared.has(pj) && packageJson(pj) === null) problem({ from: file, specifier: req.specifier, file: pj, message: `${pj} is not a JSON object` })
      }
      if (r.target === null) {
        problem({ from: file, specifier: req.specifier, file: null, message: `${file}: ${req.kind === 'require' ? 'require' : 'import'} '${req.specifier}' does not resolve inside the skill folder: ${r.failure}` })
      } else if (r.target.endsWith('.node')) {
        problem({ from: file, specifier: req.specifier, file: r.target, message: `${file} loads the native addon ${r.target}; native addons cannot run in the sandbox` })
      } else {
        reach(file, req.specifier, r.target)
      }
    }
  }
  return { reachable, problems }
}
