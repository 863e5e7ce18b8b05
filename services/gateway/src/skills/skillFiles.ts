// A skill's folder on disk: SKILLS_DIR/<name>, a real directory under
// realpath(SKILLS_DIR) with no symlink anywhere in it, and the declared
// files read from it without following links. The bytes read here are the
// ones hashed, scanned and (at run time) copied into the sandbox's private
// root, so what runs is exactly what was checked.
import { createHash } from 'node:crypto'
import { constants } from 'node:fs'
import { lstat, open, readdir, readlink, realpath } from 'node:fs/promises'
import path from 'node:path'
import type { TreeEntry } from './resolveImports.js'

export interface HashMismatch {
  file: string
  expected: string
  actual: string | null
}

export interface SkillFile {
  path: string
  source: string
}

export interface VerifiedFile {
  path: string
  bytes: Buffer
}

/** Why a skill folder cannot be used at all (400 at registration and at run). */
export interface FolderRefusal {
  error: 'symlink_refused' | 'skill_folder_refused'
  /** The offending path, relative to SKILLS_DIR. */
  path: string
  message: string
}

export interface SkillFolder {
  /** realpath(SKILLS_DIR)/<name> */
  root: string
  /** Every file and directory inside, by path relative to the root ('' is not listed). Empty when the folder does not exist. */
  tree: Map<string, TreeEntry>
}

/** More entries than any skill needs; a bound on the walk. */
export const MAX_FOLDER_ENTRIES = 10_000
const MAX_FILE_BYTES = 8 * 1024 * 1024

/**
 * Lists the skill folder with lstat only. A symlink at the root or anywhere
 * inside, or anything that is neither a file nor a directory (FIFO, socket,
 * device), refuses the whole folder, naming the path. A missing folder is an
 * empty tree (every declared file is then a mismatch).
 */
export async function inspectSkillFolder(skillsDir: string, name: string): Promise<SkillFolder | FolderRefusal> {
  let realDir: string
  try {
    realDir = await realpath(skillsDir)
  } catch {
    return { root: path.resolve(skillsDir, name), tree: new Map() }
  }
  const root = path.join(realDir, name)
  if (path.dirname(root) !== realDir) return { error: 'skill_folder_refused', path: name, message: `${name} is not a folder name` }
  const st = await lstat(root).catch(() => null)
  if (st === null) return { root, tree: new Map() }
  if (st.isSymbolicLink()) return { error: 'symlink_refused', path: name, message: `${name} in SERVICE_SKILLS_DIR is a symlink; a skill folder must be a real directory` }
  if (!st.isDirectory()) return { error: 'skill_folder_refused', path: name, message: `${name} in SERVICE_SKILLS_DIR is not a directory` }
  const tree = new Map<string, TreeEntry>()
  const pending = ['']
  while (pending.length > 0) {
    const rel = pending.pop()!
    const entries = await readdir(path.join(root, rel), { withFileTypes: true })
    for (const e of entries) {
      const relPath = rel ? `${rel}/${e.name}` : e.name
      const shown = `${name}/${relPath}`
      if (e.isSymbolicLink()) return { error: 'symlink_refused', path: shown, message: `${shown} is a symlink; nothing in a skill folder may be a symlink` }
      if (e.isDirectory()) {
        tree.set(relPath, 'dir')
        pending.push(relPath)
      } else if (e.isFile()) {
        tree.set(relPath, 'file')
      } else {
        return { error: 'skill_folder_refused', path: shown, message: `${shown} is neither a file nor a directory` }
      }
      if (tree.size > MAX_FOLDER_ENTRIES) return { error: 'skill_folder_refused', path: name, message: `${name} has more than ${MAX_FOLDER_ENTRIES} entries` }
    }
  }
  return { root, tree }
}

export function isRefusal(x: SkillFolder | FolderRefusal): x is FolderRefusal {
  return 'error' in x
}

/** A declared path that may be looked up at all: relative, no `..`, no NUL, no backslash. */
export function isPlainRelativePath(declared: string): boolean {
  if (path.posix.isAbsolute(declared) || declared.includes('\0') || declared.includes('\\')) return false
  const parts = declared.split('/')
  return !parts.includes('..') && !parts.includes('.') && !parts.includes('')
}

/**
 * Reads one file without following links: O_NOFOLLOW for the last
 * component, and the kernel's name for what was opened (/proc/self/fd) must
 * be the path asked for, so a directory swapped for a link after the walk
 * does not lead out of the folder either.
 */
async function readNoFollow(file: string): Promise<Buffer | null> {
  let handle
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => file)
    if (opened !== file) return null
    const st = await handle.stat()
    if (!st.isFile() || st.size > MAX_FILE_BYTES) return null
    return await handle.readFile()
  } catch {
    return null
  } finally {
    await handle?.close()
  }
}

/**
 * Step 4: each declared file's SHA-256 against the bytes on disk. `refused`:
 * paths not read at all (absolute, `..`, ...); `mismatches`: missing or
 * different files; `verified`: the bytes that matched, in manifest order.
 */
export async function checkSkillFiles(folder: SkillFolder, files: ReadonlyArray<{ path: string; sha256: string }>): Promise<{ mismatches: HashMismatch[]; refused: string[]; verified: VerifiedFile[] }> {
  const mismatches: HashMismatch[] = []
  const refused: string[] = []
  const verified: VerifiedFile[] = []
  for (const f of files) {
    if (!isPlainRelativePath(f.path)) {
      refused.push(f.path)
      continue
    }
    const bytes = folder.tree.get(f.path) === 'file' ? await readNoFollow(path.join(folder.root, f.path)) : null
    if (bytes === null) {
      mismatches.push({ file: f.path, expected: f.sha256, actual: null })
      continue
    }
    const actual = createHash('sha256').update(bytes).digest('hex')
    if (actual !== f.sha256) mismatches.push({ file: f.path, expected: f.sha256, actual })
    else verified.push({ path: f.path, bytes })
  }
  return { mismatches, refused, verified }
}

/** The manifest's entry: index.js when declared, else the first file. */
export function entryOf(files: ReadonlyArray<{ path: string }>): string | undefined {
  return files.some((f) => f.path === 'index.js') ? 'index.js' : files[0]?.path
}
