// A skill's folder on disk: SKILLS_DIR/<name>, a real directory under
// realpath(SKILLS_DIR) with no symlink anywhere in it, and the declared
// files read from it without following links. The bytes read here are the
// ones hashed, scanned and (at run time) copied into the sandbox's private
// root, so what runs is exactly what was checked.
import { createHash } from 'node:crypto'
import { constants } from 'node:fs'
import { lstat, open, readdir, readlink, realpath } from 'node:fs/promises'
import path from 'node:path'
import type { FileHandle } from 'node:fs/promises'
import type { TreeEntry } from './resolveImports.js'
import { DEFAULT_LIMITS } from './scan/rules.js'

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

/** A declared file the size limits refuse, named with the limit it is over. Nothing more is read once one is found. */
export interface SizeRefusal {
  /** The declared path. */
  path: string
  message: string
}

/** More entries than any skill needs; a bound on the walk. */
export const MAX_FOLDER_ENTRIES = 10_000
/** The static analysis's own limit: a larger file would be refused at step 5 anyway, so it is refused before it is read. */
export const MAX_SKILL_FILE_BYTES = DEFAULT_LIMITS.maxBytes
/**
 * All declared files of one skill together: what one registration or run
 * reads into memory (and registration decodes and scans). Without it, 256
 * declared files, hard links to one file at the per-file limit, cost 256
 * times that.
 */
export const MAX_SKILL_BYTES = 8 * 1024 * 1024

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
    // A directory that cannot be listed (no permission, a path too long, removed meanwhile) is the folder's
    // problem, named, not a 500 (found by review).
    let entries
    try {
      entries = await readdir(path.join(root, rel), { withFileTypes: true })
    } catch (err) {
      const shown = rel ? `${name}/${rel}` : name
      return { error: 'skill_folder_refused', path: shown, message: `${shown} cannot be listed (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` }
    }
    for (const e of entries) {
      const relPath = rel ? `${rel}/${e.name}` : e.name
      const shown = `${name}/${relPath}`
      if (e.isSymbolicLink()) return { error: 'symlink_refused', path: shown, message: `${shown} is a symlink; nothing in a skill folder may be a symlink` }
      if (e.isDirectory()) {
        tree.set(relPath, 'dir')
        pending.push(relPath)
      } else if (e.isFile()) {
        // A hard link is another name of a file anywhere on the same filesystem (the keystore, in a data dir
        // holding the skills folder): found by review, a skill declaring one read the key file, as a symlink once did.
        const links = (await lstat(path.join(root, relPath)).catch(() => null))?.nlink ?? 1
        if (links > 1) return { error: 'skill_folder_refused', path: shown, message: `${shown} is a hard link (${links} names for one file); a skill folder holds its own files only` }
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

/** One declared file: its bytes, its size when that is over the limit (nothing read), or nothing usable (missing, not a file, changed). */
type FileRead = { kind: 'read'; bytes: Buffer } | { kind: 'too_large'; size: number } | { kind: 'unreadable' }

const UNREADABLE: FileRead = { kind: 'unreadable' }

/**
 * Reads one file without following links: O_NOFOLLOW for the last
 * component, and the kernel's name for what was opened (/proc/self/fd) must
 * be the path asked for, so a directory swapped for a link after the walk
 * does not lead out of the folder either. The size comes from the opened
 * file itself (fstat) before a byte is read, and no more than that size is
 * read: a file that grows meanwhile is not what was measured.
 */
async function readNoFollow(file: string, maxBytes: number): Promise<FileRead> {
  let handle
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => file)
    if (opened !== file) return UNREADABLE
    const st = await handle.stat()
    // A hard link made after the walk: the same refusal, as unreadable.
    if (!st.isFile() || st.nlink > 1) return UNREADABLE
    if (st.size > maxBytes) return { kind: 'too_large', size: st.size }
    const bytes = await readExactly(handle, st.size)
    return bytes ? { kind: 'read', bytes } : UNREADABLE
  } catch {
    return UNREADABLE
  } finally {
    await handle?.close()
  }
}

/** The file's `size` bytes, or null when it turns out shorter or longer than that. */
async function readExactly(handle: FileHandle, size: number): Promise<Buffer | null> {
  // One byte more than expected: finding it means the file grew after fstat.
  const buffer = Buffer.alloc(size + 1)
  let filled = 0
  for (;;) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled)
    if (bytesRead === 0) break
    filled += bytesRead
    if (filled > size) return null
  }
  return filled === size ? buffer.subarray(0, size) : null
}

/** Why a file of `size` bytes is not read when `left` bytes of the skill's budget remain. */
function sizeRefusal(file: string, size: number, left: number): SizeRefusal {
  if (size > MAX_SKILL_FILE_BYTES) {
    return { path: file, message: `${file} is ${size} bytes; a skill file may have at most ${MAX_SKILL_FILE_BYTES} (the static analysis's limit). It was not read` }
  }
  return {
    path: file,
    message: `${file} (${size} bytes) takes the declared files over ${MAX_SKILL_BYTES} bytes in all, the most one skill may have (${MAX_SKILL_BYTES - left} bytes before it). It was not read`,
  }
}

export interface FileCheck {
  mismatches: HashMismatch[]
  refused: string[]
  verified: VerifiedFile[]
  /** Set when a file is over a size limit: the check stopped there, and the other lists are incomplete. */
  tooLarge: SizeRefusal | null
}

/**
 * Step 4: each declared file's SHA-256 against the bytes on disk. `refused`:
 * paths not read at all (absolute, `..`, ...); `mismatches`: missing or
 * different files; `verified`: the bytes that matched, in manifest order.
 * A file over MAX_SKILL_FILE_BYTES, or one that would take the files read so
 * far over MAX_SKILL_BYTES, stops the check before it is read (`tooLarge`):
 * what one request can make the gateway hold is bounded by the budget, not by
 * 256 times a file's size.
 */
export async function checkSkillFiles(folder: SkillFolder, files: ReadonlyArray<{ path: string; sha256: string }>): Promise<FileCheck> {
  const mismatches: HashMismatch[] = []
  const refused: string[] = []
  const verified: VerifiedFile[] = []
  let left = MAX_SKILL_BYTES
  for (const f of files) {
    if (!isPlainRelativePath(f.path)) {
      refused.push(f.path)
      continue
    }
    const read = folder.tree.get(f.path) === 'file' ? await readNoFollow(path.join(folder.root, f.path), Math.min(MAX_SKILL_FILE_BYTES, left)) : UNREADABLE
    if (read.kind === 'too_large') return { mismatches, refused, verified, tooLarge: sizeRefusal(f.path, read.size, left) }
    if (read.kind === 'unreadable') {
      mismatches.push({ file: f.path, expected: f.sha256, actual: null })
      continue
    }
    left -= read.bytes.length
    const actual = createHash('sha256').update(read.bytes).digest('hex')
    if (actual !== f.sha256) mismatches.push({ file: f.path, expected: f.sha256, actual })
    else verified.push({ path: f.path, bytes: read.bytes })
  }
  return { mismatches, refused, verified, tooLarge: null }
}

/** The manifest's entry: index.js when declared, else the first file. */
export function entryOf(files: ReadonlyArray<{ path: string }>): string | undefined {
  return files.some((f) => f.path === 'index.js') ? 'index.js' : files[0]?.path
}
