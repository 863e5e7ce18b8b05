// The import resolver over skill folders on disk (resolveImports.corpus/<case>/,
// each with a case.json saying what must be reachable and what must be
// refused), with module requests from the real analyser, and over the
// analyser's own corpus.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { MAX_EXPORTS_DEPTH, resolveImports, type ImportProblem } from './resolveImports.js'
import { analyseFile } from './scan/analyse.js'
import { inspectSkillFolder, isRefusal, type SkillFolder } from './skillFiles.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const CORPUS = path.join(here, 'resolveImports.corpus')
const SCAN_CORPUS = path.join(here, 'scan/corpus')

interface Case {
  entry: string
  declared: string[]
  reachable: string[]
  problems: Array<{ from: string; file: string | null; message?: string }>
}

async function folderOf(dir: string, name: string): Promise<SkillFolder> {
  const folder = await inspectSkillFolder(dir, name)
  if (isRefusal(folder)) throw new Error(folder.message)
  return folder
}

async function resolveCase(name: string, declaredPaths: string[], entry: string) {
  const folder = await folderOf(CORPUS, name)
  const declared = new Map(declaredPaths.map((p) => [p, readFileSync(path.join(folder.root, p), 'utf8')]))
  const requests = new Map([...declared].map(([p, source]) => [p, analyseFile(p, source).requests]))
  return resolveImports({ entry, declared, requests, tree: folder.tree })
}

const cases = readdirSync(CORPUS).sort()

describe('resolveImports over resolveImports.corpus', () => {
  it('has the cases the resolver must handle', () => {
    expect(cases).toEqual(['cycles', 'index-files', 'json-imports', 'package-main', 'relative', 'undeclared', 'unresolved'])
  })

  it.each(cases)('%s', async (name) => {
    const spec = JSON.parse(readFileSync(path.join(CORPUS, name, 'case.json'), 'utf8')) as Case
    const r = await resolveCase(name, spec.declared, spec.entry)
    expect(r.reachable).toEqual(spec.reachable)
    expect(r.problems.map((p: ImportProblem) => ({ from: p.from, file: p.file }))).toEqual(spec.problems.map((p) => ({ from: p.from, file: p.file })))
    for (const [i, p] of spec.problems.entries()) if (p.message) expect(r.problems[i]!.message).toContain(p.message)
    // A problem with a file always names it in its message.
    for (const p of r.problems) if (p.file !== null) expect(p.message).toContain(p.file)
  })

  it('declaring the undeclared helper and package.json makes the entry resolve; the helper is then reachable (and so scanned)', async () => {
    const r = await resolveCase('undeclared', ['index.js', 'lib/helper.js', 'package.json'], 'index.js')
    expect(r.problems).toEqual([])
    expect(r.reachable).toEqual(['index.js', 'package.json', 'lib/helper.js'])
  })

  it('an entry that is not declared is itself the problem', async () => {
    const r = await resolveCase('relative', ['lib/a.js'], 'index.js')
    expect(r.reachable).toEqual([])
    expect(r.problems).toEqual([expect.objectContaining({ file: 'index.js', message: 'the entry index.js is not declared in the manifest\'s files' })])
  })

  it('a package reached through require takes the require condition of exports', async () => {
    const folder = await folderOf(CORPUS, 'package-main')
    const declared = new Map(['index.js', 'node_modules/dep/package.json', 'node_modules/dep/dist/index.cjs'].map((p) => [p, readFileSync(path.join(folder.root, p), 'utf8')]))
    const r = resolveImports({ entry: 'index.js', declared, requests: new Map([['index.js', [{ kind: 'require', specifier: 'dep' }]]]), tree: folder.tree })
    expect(r).toEqual({ reachable: ['index.js', 'node_modules/dep/package.json', 'node_modules/dep/dist/index.cjs'], problems: [] })
  })

  it("a package whose exports nest 100,000 deep (200 KB) is an unresolved import, not a stack overflow (a 500 at registration, found by review)", () => {
    const deep = `{"name":"deep","exports":${'['.repeat(100_000)}"./i.js"${']'.repeat(100_000)}}`
    const tree = new Map([['index.js', 'file'], ['node_modules', 'dir'], ['node_modules/deep', 'dir'], ['node_modules/deep/package.json', 'file'], ['node_modules/deep/i.js', 'file']] as const)
    const declared = new Map([['index.js', ''], ['node_modules/deep/package.json', deep], ['node_modules/deep/i.js', '']])
    const r = resolveImports({ entry: 'index.js', declared, requests: new Map([['index.js', [{ kind: 'import', specifier: 'deep' }]]]), tree: new Map(tree) })
    expect(r.reachable).not.toContain('node_modules/deep/i.js')
    expect(r.problems).toEqual([expect.objectContaining({ from: 'index.js' })])
    // Nested as deep as MAX_EXPORTS_DEPTH allows, it still resolves.
    const fine = `{"name":"deep","exports":${'['.repeat(MAX_EXPORTS_DEPTH)}"./i.js"${']'.repeat(MAX_EXPORTS_DEPTH)}}`
    const ok = resolveImports({ entry: 'index.js', declared: new Map([...declared, ['node_modules/deep/package.json', fine]]), requests: new Map([['index.js', [{ kind: 'import', specifier: 'deep' }]]]), tree: new Map(tree) })
    expect(ok.reachable).toContain('node_modules/deep/i.js')
  })

  it('a native addon is refused even when declared', () => {
    const tree = new Map([['index.js', 'file'], ['addon.node', 'file']] as const)
    const r = resolveImports({ entry: 'index.js', declared: new Map([['index.js', ''], ['addon.node', '']]), requests: new Map([['index.js', [{ kind: 'require', specifier: './addon' }]]]), tree: new Map(tree) })
    expect(r.problems).toEqual([expect.objectContaining({ file: 'addon.node', message: expect.stringMatching(/native addon/) })])
  })
})

describe('resolveImports over the analyser corpus', () => {
  for (const kind of ['good', 'bad'] as const) {
    it(`lists module requests for every ${kind} file without failing, and resolves each as an entry`, async () => {
      const folder = await folderOf(SCAN_CORPUS, kind)
      const files = [...folder.tree].filter(([, k]) => k === 'file').map(([p]) => p).sort()
      const declared = new Map(files.map((p) => [p, readFileSync(path.join(folder.root, p), 'utf8')]))
      const requests = new Map(files.map((p) => [p, analyseFile(p, declared.get(p)!).requests]))
      for (const entry of files) {
        const r = resolveImports({ entry, declared, requests, tree: folder.tree })
        expect(r.reachable[0]).toBe(entry)
        // The only local file the corpus names without shipping it.
        for (const p of r.problems) expect(p.message).not.toMatch(/not declared/)
      }
      if (kind === 'good') {
        expect(requests.get('commonjs-module.js')).toEqual([
          { kind: 'require', specifier: './helpers.js' },
          { kind: 'require', specifier: 'node:util' },
        ])
        const r = resolveImports({ entry: 'commonjs-module.js', declared, requests, tree: folder.tree })
        expect(r.problems.map((p) => p.message)).toEqual([expect.stringMatching(/require '.\/helpers.js' does not resolve inside the skill folder/)])
      } else {
        expect(requests.get('forbidden_module--require-child-process.js')).toEqual([{ kind: 'require', specifier: 'child_process' }])
        expect(requests.get('forbidden_module--export-star-from-fs.js')).toEqual([{ kind: 'import', specifier: 'fs' }])
      }
    })
  }
})
