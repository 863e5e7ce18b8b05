// The modules a process really loads: a walk of the compiled JavaScript from
// its entry points, following static imports, re-exports and dynamic
// import('...') of literal specifiers, resolved as Node resolves them
// (package "exports" included). Type-only imports are gone from the compiled
// code, so they do not count. Packages other than @countersign/* are recorded
// by name, not walked into.
import { readFileSync } from 'node:fs'
import { builtinModules, createRequire } from 'node:module'

const IMPORT = /(?:^|[;\n}])\s*(?:import|export)\s+(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

export interface ImportGraph {
  /** Absolute paths of every module of ours that is loaded. */
  files: Set<string>
  /** External package names (and node: builtins) imported statically, with the file importing each. */
  packages: Map<string, string>
  /** External packages imported only with a dynamic import(). */
  dynamicPackages: Map<string, string>
}

const packageName = (spec: string) => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/')

export function importGraph(entries: readonly string[], walkInto: (pkg: string) => boolean = (pkg) => pkg.startsWith('@countersign/')): ImportGraph {
  const graph: ImportGraph = { files: new Set(), packages: new Map(), dynamicPackages: new Map() }
  const visit = (file: string) => {
    if (graph.files.has(file)) return
    graph.files.add(file)
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2])!
      const dynamic = m[2] !== undefined
      const builtin = spec.startsWith('node:') || builtinModules.includes(spec)
      const external = builtin || (!spec.startsWith('.') && !spec.startsWith('/') && !walkInto(packageName(spec)))
      if (external) {
        const name = builtin ? `node:${spec.replace(/^node:/, '')}` : packageName(spec)
        if (dynamic) {
          if (!graph.packages.has(name)) graph.dynamicPackages.set(name, file)
        } else {
          graph.packages.set(name, file)
          graph.dynamicPackages.delete(name)
        }
        continue
      }
      visit(createRequire(file).resolve(spec))
    }
  }
  for (const entry of entries) visit(entry)
  return graph
}
