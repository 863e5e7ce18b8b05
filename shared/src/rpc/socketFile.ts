import { closeSync, fchmodSync, fstatSync, lstatSync, mkdirSync, unlinkSync } from 'node:fs'
import { openOwnDirectory } from '../files/privateFiles.js'
import net from 'node:net'
import path from 'node:path'
import { OperatorError } from '../operatorError.js'

/** sun_path is 108 bytes on Linux, one of them the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107

// Every refusal here is a deployment problem found at start (path too long, directory modes, a socket in use): an OperatorError.
const PROBE_TIMEOUT_MS = 1000

export function assertSocketPathFits(socketPath: string): void {
  const bytes = Buffer.byteLength(socketPath)
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new OperatorError(`socket path ${socketPath} is ${bytes} bytes; Unix socket paths are limited to ${MAX_SOCKET_PATH_BYTES}`)
  }
}

/** 0600: the owner only (one user runs everything). 0660: the directory's group too (one user per process). */
export type SocketMode = 0o600 | 0o660

/**
 * Creates the socket's directory with mode 0700, or tightens an existing one
 * to 0700. A shared directory (sticky bit, like /tmp) is refused rather than
 * locked down for everyone else. For a group socket (0660) the directory must
 * already exist setgid, closed to others and not group-writable (e.g. 2710,
 * made by tmpfiles.d): its group is who may connect.
 *
 * Held to the data directory's rules (makePrivateDir): not a symbolic link
 * (it would chmod and fill whatever the link names) and not another user's
 * (root's is accepted for a group socket, as tmpfiles.d may make it). Whoever
 * owns the directory can swap the socket in it for their own and answer as
 * the signer, the grant socket or the approver (found by review: a directory
 * of uid 65534 was chmodded and accepted, and its owner then bound a fake
 * signer.sock).
 */
export function ensurePrivateDir(dir: string, socketMode: SocketMode = 0o600): void {
  if (socketMode === 0o660) {
    const st = lstatSync(dir, { throwIfNoEntry: false })
    if (st?.isSymbolicLink()) throw new OperatorError(`${dir} is a symbolic link: give the real directory of the group socket`)
    if (!st?.isDirectory()) throw new OperatorError(`${dir} must exist for a group socket (setgid, mode 2710)`)
    const uid = process.getuid?.()
    if (uid !== undefined && st.uid !== uid && st.uid !== 0) {
      throw new OperatorError(`${dir} belongs to uid ${st.uid}, neither this process's user (uid ${uid}) nor root: whoever owns it could replace the socket in it`)
    }
    if ((st.mode & 0o027) !== 0 || (st.mode & 0o2000) === 0) {
      throw new OperatorError(`${dir} must be setgid and closed to others for a group socket (mode 2710); it is ${(st.mode & 0o7777).toString(8)}`)
    }
    return
  }
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
  } catch (err) {
    // A dangling link or a file in its place: openOwnDirectory says which, in words.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST' && !lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink()) throw err
  }
  const fd = openOwnDirectory(dir)
  try {
    const mode = fstatSync(fd).mode
    if ((mode & 0o077) === 0) return
    if ((mode & 0o1000) !== 0) {
      throw new OperatorError(`${dir} is a shared directory (sticky bit); put the socket in a directory of its own`)
    }
    fchmodSync(fd, 0o700)
  } finally {
    closeSync(fd)
  }
}

type Probe = 'listening' | 'refused' | 'gone'

/** Whether something still accepts connections on the socket file. */
function probe(socketPath: string): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socketPath)
    const done = (outcome: Probe | Error) => {
      clearTimeout(timer)
      s.destroy()
      if (outcome instanceof Error) reject(outcome)
      else resolve(outcome)
    }
    // A live server with a full backlog may not accept in time; it is still live.
    const timer = setTimeout(() => done('listening'), PROBE_TIMEOUT_MS)
    s.once('connect', () => done('listening'))
    s.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED') done('refused')
      else if (err.code === 'ENOENT') done('gone')
      else done(new Error(`cannot probe ${socketPath}: ${err.code ?? err.message}`))
    })
  })
}

/**
 * Clears the way for listen(): a socket file left by a crashed process is
 * removed (listen would fail with EADDRINUSE), but a path that is not a
 * socket, or a socket a live server still answers on, is left alone.
 */
export async function removeStaleSocket(socketPath: string): Promise<void> {
  let st
  try {
    st = lstatSync(socketPath)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  if (!st.isSocket()) throw new OperatorError(`${socketPath} exists and is not a socket; refusing to remove it`)
  const state = await probe(socketPath)
  if (state === 'listening') throw new OperatorError(`${socketPath} is in use by a running server`)
  if (state === 'gone') return
  try {
    unlinkSync(socketPath)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
}

/** Everything listen() needs done first: path length, private directory, no stale socket. */
export async function prepareSocketPath(socketPath: string, socketMode: SocketMode = 0o600): Promise<void> {
  assertSocketPathFits(socketPath)
  ensurePrivateDir(path.dirname(socketPath), socketMode)
  await removeStaleSocket(socketPath)
}
