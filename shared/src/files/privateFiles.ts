import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { OperatorError } from '../operatorError.js'

/** Mode of every directory countersign creates: its owner only. */
export const PRIVATE_DIR_MODE = 0o700
/** Mode of every database, WAL/SHM, secret and key file countersign creates. */
export const PRIVATE_FILE_MODE = 0o600

/**
 * Creates `dir` (and missing parents) and sets it to 0700 whatever the umask:
 * mkdir's mode is filtered by the umask, and an existing directory keeps
 * whatever mode it had. `dir` itself must be a real directory of this
 * process's user: through a symbolic link the process would chmod and fill
 * whatever directory the link names (whoever could place the link chose
 * it), and a directory of another user is one that user can read, swap or
 * fill with files of their own. Both are refused in one sentence. The
 * directory is opened without following a link and chmodded through that
 * descriptor, so a link put in its place meanwhile is not followed either.
 * Links among its parents (/var/run -> /run) are followed as usual.
 */
export function makePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  } catch (err) {
    // A dangling link (ENOENT) or a file (EEXIST) in its place: said below, in words.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST' && !lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink()) throw err
  }
  const fd = openOwnDirectory(dir)
  try {
    if ((fstatSync(fd).mode & 0o7777) !== PRIVATE_DIR_MODE) fchmodSync(fd, PRIVATE_DIR_MODE)
  } finally {
    closeSync(fd)
  }
}

/** A descriptor of `dir`, refused when it is a link, not a directory, or another user's. */
export function openOwnDirectory(dir: string): number {
  let fd: number
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ELOOP' || lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new OperatorError(`${dir} is a symbolic link: give the real directory (this process makes it private and keeps its own files there, and will not follow a link to wherever it points)`)
    }
    if (code === 'ENOTDIR') throw new OperatorError(`${dir} is not a directory`)
    throw err
  }
  const uid = process.getuid?.()
  const owner = fstatSync(fd).uid
  if (uid !== undefined && owner !== uid) {
    closeSync(fd)
    throw new OperatorError(
      `${dir} belongs to uid ${owner}, not to this process's user (uid ${uid}): run as the directory's owner (in the systemd layout, sudo -u countersign-<process>), or give a directory of your own`,
    )
  }
  return fd
}

/**
 * The file a database path names, its symbolic links followed, even when the
 * last one points at a file not created yet. SQLite keeps the -wal and -shm
 * files beside the real file, not beside a link to it, so whatever this
 * process syncs, creates or chmods itself must use this path (the shared
 * audit.db is reached through one link per process in the systemd layout).
 */
export function databaseTarget(file: string): string {
  let current = path.resolve(file)
  for (let hops = 0; hops < 40; hops++) {
    const st = lstatSync(current, { throwIfNoEntry: false })
    if (!st) return current
    if (!st.isSymbolicLink()) return realpathSync(current)
    current = path.resolve(path.dirname(current), readlinkSync(current))
  }
  throw new OperatorError(`${file}: too many levels of symbolic links`)
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

export interface ReadSecretFileOptions {
  /** What the file is, for messages: "SERVICE_PASSPHRASE_FILE". */
  variable: string
  maxBytes: number
  /** Builds the error thrown for each refusal (each caller keeps its own error class). */
  refuse: (message: string) => Error
  /** For CREDENTIALS_DIRECTORY (see below); default process.env. */
  env?: Readonly<Record<string, string | undefined>>
}

/**
 * Reads a file holding a secret an operator gave (passphrase, PIN, webhook
 * secret, operators file): a regular file, no bits for group or others, at
 * most `maxBytes`; checked on the open descriptor, so a file swapped after
 * the check is not read. A file in systemd's CREDENTIALS_DIRECTORY may show
 * an ACL mask in its group bits (0440): there only the bits for others must
 * be clear.
 */
export function readSecretFile(file: string, opts: ReadSecretFileOptions): string {
  const label = `${opts.variable} ${file}`
  let fd: number
  try {
    // O_NONBLOCK: a FIFO in its place opens at once and is refused below, instead of waiting for a writer.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (err) {
    throw opts.refuse(`cannot read ${label}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw opts.refuse(`${label} is not a regular file`)
    const forbidden = isSystemdCredential(file, opts.env ?? process.env) ? 0o007 : 0o077
    if ((st.mode & forbidden) !== 0) throw opts.refuse(`${label} is readable by group or others (mode ${(st.mode & 0o777).toString(8)}); run: chmod 600 ${file}`)
    if (st.size > opts.maxBytes) throw opts.refuse(`${label} is larger than ${opts.maxBytes} bytes`)
    const text = utf8Text(readFileSync(fd))
    if (text === null) throw opts.refuse(`${label} is not UTF-8 text; a secret of raw bytes would lose bytes when read as text: write it as text (for example base64)`)
    return text
  } finally {
    closeSync(fd)
  }
}

/** The bytes as UTF-8 text, or null when they are not valid UTF-8 (nothing replaced with U+FFFD). */
export function utf8Text(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return null
  }
}

/**
 * A file a process keeps in its own data directory (a key, a token): read
 * only when it is a regular file reached without a symlink (O_NOFOLLOW) and
 * at most `maxBytes`; a FIFO in its place is refused, not waited on
 * (O_NONBLOCK). With `privateMode`, group and other bits found on it are
 * cleared through the open descriptor (never through a link). Returns null
 * when the file does not exist.
 */
export function readOwnFile(file: string, opts: { maxBytes: number; refuse: (message: string) => Error; privateMode?: boolean }): Buffer | null {
  let fd: number
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return null
    throw opts.refuse(code === 'ELOOP' ? `${file} is a symbolic link; it must be the file itself` : `cannot read ${file}: ${code ?? (err as Error).message}`)
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw opts.refuse(`${file} is not a regular file`)
    if (st.size > opts.maxBytes) throw opts.refuse(`${file} is larger than ${opts.maxBytes} bytes`)
    if (opts.privateMode && (st.mode & 0o077) !== 0) fchmodSync(fd, PRIVATE_FILE_MODE)
    return readFileSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Refuses, in words, a path that exists and is not a regular file (a
 * directory, a FIFO, a device) before SQLite opens it: SQLite would answer
 * "unable to open database file" or "disk I/O error", or wait on a FIFO.
 */
export function assertDatabaseFile(file: string): void {
  const st = statSync(file, { throwIfNoEntry: false })
  if (st && !st.isFile()) throw new OperatorError(`${file} is not a regular file (a SQLite database is expected there)`)
}

/**
 * What opening a database (the constructor and its first statements) failed
 * with, in words naming the file when SQLite says the file itself is the
 * problem; any other error as it was.
 */
export function databaseOpenError(file: string, err: unknown): unknown {
  const code = (err as { code?: unknown }).code
  if (typeof code !== 'string') return err
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) return new OperatorError(`${file} is not a SQLite database, or is damaged (${(err as Error).message}); restore it from a backup`)
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_IOERR')) return new OperatorError(`${file} cannot be opened as a database (${(err as Error).message})`)
  return err
}

function isSystemdCredential(file: string, env: Readonly<Record<string, string | undefined>>): boolean {
  const dir = env.CREDENTIALS_DIRECTORY?.trim()
  return !!dir && path.dirname(path.resolve(file)) === path.resolve(dir)
}
