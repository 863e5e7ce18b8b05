import path from 'node:path'
import type { SocketMode } from '../rpc/socketFile.js'
import { APPROVER_SOCKET } from './approver.js'
import { GRANT_SOCKET, SIGNER_SOCKET } from './signer.js'

export interface SocketConfig {
  signer: string
  grant: string
  approver: string
  /** Mode of the sockets a process listens on: 0600, or 0660 when each process runs as its own user. */
  mode: SocketMode
}

export class SocketConfigError extends Error {
  override name = 'SocketConfigError'
}

/**
 * Where the three sockets are. By default all in DATA_DIR/run (one user runs
 * everything); a deployment with one user per process gives each socket its
 * own setgid directory (SERVICE_SIGNER_SOCKET, SERVICE_GRANT_SOCKET,
 * SERVICE_APPROVER_SOCKET) and SERVICE_SOCKET_MODE=0660, so that a directory's
 * group says who may connect (docs/operations.md).
 */
export function socketConfigFromEnv(env: Record<string, string | undefined>, dataDir: string): SocketConfig {
  const run = path.join(dataDir, 'run')
  const pick = (variable: string, fallback: string) => {
    const v = env[variable]?.trim()
    if (!v) return fallback
    if (!path.isAbsolute(v)) throw new SocketConfigError(`${variable} must be an absolute path; got "${v}"`)
    return v
  }
  const modeRaw = env.SERVICE_SOCKET_MODE?.trim() || '0600'
  if (modeRaw !== '0600' && modeRaw !== '0660') throw new SocketConfigError(`SERVICE_SOCKET_MODE must be 0600 or 0660; got "${modeRaw}"`)
  return {
    signer: pick('SERVICE_SIGNER_SOCKET', path.join(run, SIGNER_SOCKET)),
    grant: pick('SERVICE_GRANT_SOCKET', path.join(run, GRANT_SOCKET)),
    approver: pick('SERVICE_APPROVER_SOCKET', path.join(run, APPROVER_SOCKET)),
    mode: modeRaw === '0660' ? 0o660 : 0o600,
  }
}
