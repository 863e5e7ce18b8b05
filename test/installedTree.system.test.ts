// The installed trees: /opt/countersign as docs/operations.md's Build step
// makes it, and the container image's /opt/countersign as the Containerfile
// makes it. Both copy node_modules, whose .bin/countersign-* links point into
// each workspace's committed bin/ folder; a tree without those folders has
// dangling links, and `npx countersign-keys` there fetches and runs a registry
// package of that name (npm assumes --yes when stdin is piped, and a private
// key is piped into `countersign-keys import`). Each tree is built here from
// the copy commands in the file itself, so the file and this test cannot
// drift apart: the Build step's shell lines run as written (into a scratch
// folder instead of /opt/countersign, without sudo), and the Containerfile's
// COPY instructions are carried out on this checkout, which holds what the
// build stage holds after its RUN (node_modules and every dist/).
import { execFile, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { repoRoot } from './support/processes.js'
import { containerfileInstructions, type ContainerfileInstruction } from './support/containerfile.js'

const exec = promisify(execFile)
const OPT = '/opt/countersign'

let scratch: string

beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'countersign-installed-'))
})

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true })
})

/** The shell lines of the fenced block right after "**Build**" in docs/operations.md. */
function docsBuildStep(): string[] {
  const text = readFileSync(path.join(repoRoot, 'docs/operations.md'), 'utf8')
  const at = text.indexOf('**Build**')
  if (at === -1) throw new Error('docs/operations.md has no **Build** step')
  const block = /```sh\n([\s\S]*?)\n\s*```/.exec(text.slice(at))
  if (!block) throw new Error('docs/operations.md: no ```sh block after **Build**')
  return block[1]!.split('\n').map((l) => l.trim()).filter((l) => l !== '')
}

/**
 * The Build step as a script that fills `tree` from this checkout: sudo
 * dropped, /opt/countersign replaced by `tree`. The first line (npm ci, tsc,
 * prune) is left out: this checkout is built, and pruning it would take the
 * test runner's own dependencies away; chown needs root and changes no path.
 */
function docsInstallScript(tree: string): string {
  const lines = docsBuildStep()
  expect(lines[0], 'the Build step starts with the build itself').toMatch(/^npm ci /)
  return lines
    .slice(1)
    .filter((l) => !/^sudo chown /.test(l))
    .map((l) => l.replace(/\bsudo /g, '').replaceAll(OPT, tree))
    .join('\n')
}


/** The instructions of each stage, by the name `FROM … AS name` gives it. */
function stages(): Map<string, ContainerfileInstruction[]> {
  const byName = new Map<string, ContainerfileInstruction[]>()
  let current: ContainerfileInstruction[] | null = null
  for (const i of containerfileInstructions(path.join(repoRoot, 'deploy/container/Containerfile'))) {
    if (i.op === 'FROM') {
      current = []
      byName.set(/\bAS\s+(\S+)$/i.exec(i.args)?.[1] ?? `stage${byName.size}`, current)
    } else current?.push(i)
  }
  return byName
}

/** A COPY's sources and destination, its --flags set apart. */
function copyArgs(args: string): { from: string | null; sources: string[]; dest: string } {
  const words = args.split(/\s+/)
  const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length) ?? null
  const paths = words.filter((w) => !w.startsWith('--'))
  return { from, sources: paths.slice(0, -1), dest: paths.at(-1)! }
}

/** The workspaces whose package.json names a bin, as repository paths. */
function workspacesWithBins(): string[] {
  const workspaces = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces
  return workspaces.filter((w) => (JSON.parse(readFileSync(path.join(repoRoot, w, 'package.json'), 'utf8')) as { bin?: unknown }).bin !== undefined)
}

/**
 * Fills `tree` as the runtime stage's `COPY --from=build /src/…` lines do
 * (WORKDIR /opt/countersign), taking /src to be this checkout: a directory's
 * contents go into the destination, a file into it when it ends in '/'.
 */
function containerInstall(runtime: ContainerfileInstruction[], tree: string): void {
  const workdir = runtime.filter((i) => i.op === 'WORKDIR').at(-1)?.args
  expect(workdir).toBe(OPT)
  for (const i of runtime.filter((x) => x.op === 'COPY')) {
    const { from, sources, dest } = copyArgs(i.args)
    expect(from, `runtime ${i.op} ${i.args}`).toBe('build')
    const target = path.resolve(tree, dest)
    for (const source of sources) {
      expect(source.startsWith('/src/'), source).toBe(true)
      const inCheckout = path.join(repoRoot, source.slice('/src/'.length))
      if (statSync(inCheckout).isDirectory()) cpSync(inCheckout, target, { recursive: true, verbatimSymlinks: true })
      else {
        const file = dest.endsWith('/') || sources.length > 1 ? path.join(target, path.basename(source)) : target
        mkdirSync(path.dirname(file), { recursive: true })
        cpSync(inCheckout, file)
      }
    }
  }
}

/** Each node_modules/.bin/countersign-* of the tree, with what it resolves to (null: dangling, or outside the tree). */
function countersignLinks(tree: string): Map<string, string | null> {
  const bin = path.join(tree, 'node_modules/.bin')
  const links = new Map<string, string | null>()
  const realTree = realpathSync(tree)
  for (const name of readdirSync(bin).filter((n) => n.startsWith('countersign-'))) {
    let target: string | null = null
    try {
      target = realpathSync(path.join(bin, name))
    } catch {
      target = null
    }
    links.set(name, target !== null && target.startsWith(realTree + path.sep) ? target : null)
  }
  return links
}

/** `npx --offline countersign-keys --help` in the tree: never a registry, and the local launcher's usage. */
async function npxKeysHelp(tree: string): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await exec('npx', ['--offline', 'countersign-keys', '--help'], {
      cwd: tree,
      timeout: 60_000,
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_yes: 'false' },
    })
    return { code: 0, out: stdout, err: stderr }
  } catch (e) {
    const err = e as { code?: number | string; stdout?: string; stderr?: string }
    return { code: typeof err.code === 'number' ? err.code : -1, out: err.stdout ?? '', err: err.stderr ?? String(e) }
  }
}

/** The bin names of these workspaces. */
function binNames(workspaces: string[]): string[] {
  return workspaces.flatMap((w) => Object.keys((JSON.parse(readFileSync(path.join(repoRoot, w, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin))
}

/** Every link (or, with `only`, every one of those names) resolves inside the tree, and each installed workspace's commands are linked. */
function expectEveryLinkResolves(tree: string, workspaces: string[], only?: string[]): void {
  const links = countersignLinks(tree)
  const dangling = [...links].filter(([name, target]) => target === null && (only === undefined || only.includes(name))).map(([name]) => name)
  expect(dangling, 'node_modules/.bin links that lead nowhere inside the tree').toEqual([])
  // Every command of every installed workspace is linked.
  for (const w of workspaces.filter((x) => existsSync(path.join(tree, x)))) {
    for (const name of binNames([w])) expect(links.get(name), `${name} (${w})`).toBe(realpathSync(path.join(tree, w, 'bin', `${name}.js`)))
  }
}

describe('the installed tree of docs/operations.md (Build)', () => {
  let tree: string

  beforeAll(() => {
    tree = path.join(scratch, 'docs-opt')
    const r = spawnSync('bash', ['-e', '-c', docsInstallScript(tree)], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 })
    expect(r.status, r.stderr).toBe(0)
  }, 150_000)

  it('links every countersign-* command to a launcher inside the tree', () => {
    expectEveryLinkResolves(tree, workspacesWithBins())
    expect(countersignLinks(tree).has('countersign-keys')).toBe(true)
  })

  it('npx --offline countersign-keys --help runs the installed launcher, not a registry package', async () => {
    const r = await npxKeysHelp(tree)
    expect(r.code, r.out + r.err).toBe(0)
    expect(r.out).toContain('usage: countersign-keys')
  })
})

describe('the installed tree of deploy/container/Containerfile', () => {
  const byStage = stages()

  /** The workspaces with commands whose package.json the build stage has: npm ci links only theirs. */
  const builtWorkspaces = () => workspacesWithBins().filter((w) => byStage.get('build')!.some((i) => i.op === 'COPY' && copyArgs(i.args).sources.includes(`${w}/package.json`)))

  it('the build stage has each bin/ folder before npm ci, so that npm links the commands at all', () => {
    const build = byStage.get('build')!
    const npmCi = build.findIndex((i) => i.op === 'RUN' && /\bnpm ci\b/.test(i.args))
    expect(npmCi).toBeGreaterThan(-1)
    const copiedBefore = build.slice(0, npmCi).filter((i) => i.op === 'COPY').flatMap((i) => copyArgs(i.args).sources)
    expect(builtWorkspaces()).toContain('services/signer')
    for (const w of builtWorkspaces()) expect(copiedBefore, `${w}/bin`).toContain(`${w}/bin`)
  })

  it('the runtime stage links every countersign-* command to a launcher inside the image, and npx finds it offline', async () => {
    const tree = path.join(scratch, 'image-opt')
    containerInstall(byStage.get('runtime')!, tree)
    // This checkout's node_modules also links the commands of workspaces the
    // image leaves out (clients/mcp); the image's own npm ci never makes those.
    expectEveryLinkResolves(tree, workspacesWithBins(), binNames(builtWorkspaces()))
    const r = await npxKeysHelp(tree)
    expect(r.code, r.out + r.err).toBe(0)
    expect(r.out).toContain('usage: countersign-keys')
  }, 150_000)
})
