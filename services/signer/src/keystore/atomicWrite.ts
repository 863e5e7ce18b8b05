import { randomBytes } from 'node:crypto'
import { closeSync, fchmodSync, fsyncSync, linkSync, openSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'

export class FileExistsError extends Error {
  override name = 'FileExistsError'
  constructor(readonly file: string) {
    super(`${file} already exists`)
  }
}

/** Temp files start with a dot so that directory listings of real files skip them. */
export const isTempName = (name: string): boolean => name.startsWith('.') && name.endsWith('.tmp')

/**
 * Creates `dir/name` with `data` and `mode`, all or nothing, and never over an
 * existing file: the data goes to a fresh temp file in the same directory
 * (exclusive create, fsync), which is then hard-linked to the final name (link
 * fails if the name exists, so two writers cannot both win) and unlinked; the
 * directory is fsynced last. Throws FileExistsError when the name is taken.
 */
export function createFileAtomic(dir: string, name: string, data: string, mode = 0o600): string {
  const target = path.join(dir, name)
  const temp = writeTempFile(dir, name, data, mode)
  try {
    try {
      linkSync(temp, target)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new FileExistsError(target)
      throw err
    }
  } finally {
    unlinkSync(temp)
  }
  fsyncDir(dir)
  return target
}

/**
 * Replaces `dir/name` with `data` and `mode`, all or nothing: a fresh temp
 * file in the same directory (exclusive create, fsync) is renamed over it,
 * then the directory is fsynced. A crash leaves the old file or the new one,
 * never a mix (and at worst a stray temp file, which listings skip).
 */
export function replaceFileAtomic(dir: string, name: string, data: string, mode = 0o600): string {
  const target = path.join(dir, name)
  const temp = writeTempFile(dir, name, data, mode)
  try {
    renameSync(temp, target)
  } catch (err) {
    try {
      unlinkSync(temp)
    } catch {
      // renamed already, or never created
    }
    throw err
  }
  fsyncDir(dir)
  return target
}

/** A fresh temp file (exclusive create) beside `name` holding `data`, fsynced; its path. Removed again if writing fails. */
function writeTempFile(dir: string, name: string, data: string, mode: number): string {
  const temp = path.join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`)
  const fd = openSync(temp, 'wx', mode)
  try {
    fchmodSync(fd, mode) // the umask may have removed bits; never added any
    writeFileSync(fd, data)
    fsyncSync(fd)
  } catch (err) {
    closeSync(fd)
    unlinkSync(temp)
    throw err
  }
  closeSync(fd)
  return temp
}

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
