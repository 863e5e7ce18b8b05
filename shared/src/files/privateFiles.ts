import { chmodSync, closeSync, constants, fchmodSync, mkdirSync, openSync, statSync } from 'node:fs'

/** Mode of every directory countersign creates: its owner only. */
export const PRIVATE_DIR_MODE = 0o700
/** Mode of every database, WAL/SHM, secret and key file countersign creates. */
export const PRIVATE_FILE_MODE = 0o600

/**
 * Creates `dir` (and missing parents) and sets it to 0700 whatever the umask:
 * mkdir's mode is filtered by the umask, and an existing directory keeps
 * whatever mode it had.
 */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  if ((statSync(dir).mode & 0o7777) !== PRIVATE_DIR_MODE) chmodSync(dir, PRIVATE_DIR_MODE)
}

/**
 * Creates an empty `file` with mode 0600 unless it exists (a symlink counts,
 * and its target is left alone). The mode is set with fchmod after the
 * exclusive create, so a umask of 000 cannot widen it and a strict one cannot
 * narrow it to something the owner cannot read. An existing file keeps its
 * mode: the audit log of the one-user-per-process layout is 0660 on purpose
 * (deploy/systemd/tmpfiles.d). Returns whether it created the file.
 *
 * Create a SQLite database this way before opening it: SQLite creates a new
 * database 0644 minus the umask, and gives its -wal and -shm files the
 * database file's own mode, so a database created here keeps all three 0600.
 */
export function createPrivateFileIfMissing(file: string): boolean {
  let fd: number
  try {
    fd = openSync(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, PRIVATE_FILE_MODE)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE)
  } finally {
    closeSync(fd)
  }
  return true
}

/**
 * For files only their own process may read (signer.db, gateway.db): creates
 * the file 0600 if missing, and puts an existing one and its SQLite -wal and
 * -shm files (when present) back to 0600, e.g. files left by an older version
 * that created them with the umask's mode.
 */
export function makePrivateFile(file: string): void {
  createPrivateFileIfMissing(file)
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    const st = statSync(f, { throwIfNoEntry: false })
    if (st && (st.mode & 0o7777) !== PRIVATE_FILE_MODE) chmodSync(f, PRIVATE_FILE_MODE)
  }
}
