import { createHash } from 'node:crypto'
import { lstat, readFile, realpath } from 'node:fs/promises'
import path from 'node:path'

export interface HashMismatch {
  file: string
  expected: string
  actual: string | null
}

export interface SkillFile {
  path: string
  source: string
}

/**
 * Where a declared path may be read: inside SKILLS_DIR/<name>, no absolute
 * paths, no `..`, and no symlink that resolves outside the root. A path that
 * fails is refused without being read.
 */
export async function resolveInside(root: string, declared: string): Promise<string | null> {
  if (path.isAbsolute(declared) || declared.split(/[\\/]/).includes('..') || declared.includes('\0')) return null
  const candidate = path.resolve(root, declared)
  if (candidate !== root && !candidate.startsWith(root + path.sep)) return null
  let real: string
  let realRoot: string
  try {
    realRoot = await realpath(root)
    real = await realpath(candidate)
  } catch {
    return candidate // missing: reported as a mismatch with actual null
  }
  if (!real.startsWith(realRoot + path.sep)) return null
  return real
}

/** Step 4: compares each declared SHA-256 with the file on disk; returns the mismatches and the files' text. */
export async function checkSkillFiles(skillsDir: string, name: string, files: Array<{ path: string; sha256: string }>): Promise<{ mismatches: HashMismatch[]; refused: string[]; sources: SkillFile[] }> {
  const root = path.resolve(skillsDir, name)
  const mismatches: HashMismatch[] = []
  const refused: string[] = []
  const sources: SkillFile[] = []
  for (const f of files) {
    const where = await resolveInside(root, f.path)
    if (where === null) {
      refused.push(f.path)
      continue
    }
    let bytes: Buffer
    try {
      const st = await lstat(where)
      if (!st.isFile()) throw new Error('not a file')
      bytes = await readFile(where)
    } catch {
      mismatches.push({ file: f.path, expected: f.sha256, actual: null })
      continue
    }
    const actual = createHash('sha256').update(bytes).digest('hex')
    if (actual !== f.sha256) mismatches.push({ file: f.path, expected: f.sha256, actual })
    else sources.push({ path: f.path, source: bytes.toString('utf8') })
  }
  return { mismatches, refused, sources }
}
