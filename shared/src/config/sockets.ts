import { statSync } from 'node:fs'
import path from 'node:path'
import type { SocketMode } from '../rpc/socketFile.js'
import { APPROVER_HTTP_SOCKET, APPROVER_SOCKET } from '../protocol/approver.js'
import { GRANT_SOCKET, SIGNER_SOCKET } from '../protocol/signer.js'
import { ConfigError } from './configError.js'
import { readVariable, type Env } from './read.js'

export interface SocketConfig {
  signer: string
  grant: string
  approver: string
  /** The approver's HTTP app for the gateway's forwarding: beside `approver`, in the directory the gateway may enter. */
  approverHttp: string
  /** Mode of the sockets a process listens on: 0600, or 0660 when each process runs as its own user. */
  mode: SocketMode
}

/**
 * Where the three sockets are. By default all in DATA_DIR/run (one user runs
 * everything); a deployment with one user per process gives each socket its
 * own setgid directory (SERVICE_SIGNER_SOCKET, SERVICE_GRANT_SOCKET,
 * SERVICE_APPROVER_SOCKET) and SERVICE_SOCKET_MODE=0660, so that a directory's
 * group says who may connect (docs/operations.md).
 */
export function socketConfigFromEnv(env: Env, dataDir: string): SocketConfig {
  const run = path.join(dataDir, 'run')
  const approver = readVariable(env, 'SERVICE_APPROVER_SOCKET') ?? path.join(run, APPROVER_SOCKET)
  const config: SocketConfig = {
    signer: readVariable(env, 'SERVICE_SIGNER_SOCKET') ?? path.join(run, SIGNER_SOCKET),
    grant: readVariable(env, 'SERVICE_GRANT_SOCKET') ?? path.join(run, GRANT_SOCKET),
    approver,
    approverHttp: path.join(path.dirname(approver), APPROVER_HTTP_SOCKET),
    mode: readVariable(env, 'SERVICE_SOCKET_MODE') === '0660' ? 0o660 : 0o600,
  }
  // In group mode a directory's group is who may connect: grant.sock in the
  // directory of a socket the gateway reaches would let the gateway's group
  // mint approval tokens (found by review; the shipped units keep them apart).
  if (config.mode === 0o660) {
    for (const [name, socket] of [['SERVICE_SIGNER_SOCKET', config.signer], ['SERVICE_APPROVER_SOCKET', config.approver]] as const) {
      if (sameDirectory(path.dirname(socket), path.dirname(config.grant))) {
        throw new ConfigError(
          `SERVICE_SOCKET_MODE=0660 lets a socket directory's group connect, and SERVICE_GRANT_SOCKET (${config.grant}) is in the same directory as ${name} (${socket}), which the gateway reaches: the gateway could mint approval tokens. Give grant.sock a directory of its own whose group only the approver is in (docs/operations.md)`,
        )
      }
    }
  }
  return config
}

/**
 * One directory however it is spelled: /run/cs, /run/cs/. and /run/x/../cs
 * (found by review: the guard compared the strings), and, where both exist,
 * a link to it or another mount of it (same device and inode).
 */
function sameDirectory(a: string, b: string): boolean {
  if (path.resolve(a) === path.resolve(b)) return true
  const sa = statSync(a, { throwIfNoEntry: false })
  const sb = statSync(b, { throwIfNoEntry: false })
  return sa !== undefined && sb !== undefined && sa.dev === sb.dev && sa.ino === sb.ino
}
