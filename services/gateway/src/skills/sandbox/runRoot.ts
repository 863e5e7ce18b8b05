// The sandbox's view of a skill: a private directory per run holding only
// the manifest's files, written from the bytes whose hashes were just
// checked. Nothing else from the skill folder (undeclared helpers, files
// rewritten after the check, links) exists in there.
import { mkdirSync, rmSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { isPlainRelativePath, type VerifiedFile } from '../skillFiles.js'

export interface RunRoot {
  dir: string
  remove(): Promise<void>
}

const runRootsDir = (runDir: string) => path.join(runDir, 'skill-roots')

/** At start: private roots left behind by runs that a crash interrupted. */
export function removeStaleRunRoots(runDir: string): void {
  rmSync(runRootsDir(runDir), { recursive: true, force: true })
}

export async function createRunRoot(runDir: string, files: readonly VerifiedFile[]): Promise<RunRoot> {
  const parent = runRootsDir(runDir)
  mkdirSync(parent, { recursive: true, mode: 0o700 })
  const dir = await mkdtemp(path.join(parent, 'run-'))
  const remove = () => rm(dir, { recursive: true, force: true })
  try {
    for (const f of files) {
      // Checked at registration and by checkSkillFiles; checked again because this writes.
      if (!isPlainRelativePath(f.path)) throw new Error(`refusing to write ${JSON.stringify(f.path)}`)
      const target = path.join(dir, f.path)
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 })
      // flag wx: a path declared twice, or a file where a directory was, fails instead of overwriting.
      await writeFile(target, f.bytes, { mode: 0o400, flag: 'wx' })
    }
  } catch (err) {
    await remove()
    throw err
  }
  return { dir, remove }
}
