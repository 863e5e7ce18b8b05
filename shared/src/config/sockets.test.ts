import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError } from './configError.js'
import { socketConfigFromEnv } from './sockets.js'

describe('socketConfigFromEnv', () => {
  it('defaults to DATA_DIR/run and mode 0600', () => {
    expect(socketConfigFromEnv({}, '/var/lib/cs')).toEqual({ signer: '/var/lib/cs/run/signer.sock', grant: '/var/lib/cs/run/grant.sock', approver: '/var/lib/cs/run/approver.sock', approverHttp: '/var/lib/cs/run/approver-http.sock', mode: 0o600 })
  })
  it('takes one directory per socket and group mode for one user per process (the approver\'s HTTP socket beside approver.sock)', () => {
    const c = socketConfigFromEnv({ SERVICE_SIGNER_SOCKET: '/run/cs/sign/signer.sock', SERVICE_GRANT_SOCKET: '/run/cs/grant/grant.sock', SERVICE_APPROVER_SOCKET: '/run/cs/approval/approver.sock', SERVICE_SOCKET_MODE: '0660' }, '/x')
    expect(c).toEqual({ signer: '/run/cs/sign/signer.sock', grant: '/run/cs/grant/grant.sock', approver: '/run/cs/approval/approver.sock', approverHttp: '/run/cs/approval/approver-http.sock', mode: 0o660 })
  })
  it('refuses group mode with grant.sock in the directory of a socket the gateway reaches (the default one included)', () => {
    // Found by review: the gateway's group could reach grant.sock and mint approval tokens.
    expect(() => socketConfigFromEnv({ SERVICE_SOCKET_MODE: '0660' }, '/x')).toThrow(/SERVICE_GRANT_SOCKET \(\/x\/run\/grant\.sock\) is in the same directory as SERVICE_SIGNER_SOCKET/)
    expect(() =>
      socketConfigFromEnv({ SERVICE_SOCKET_MODE: '0660', SERVICE_SIGNER_SOCKET: '/run/cs/signer/signer.sock', SERVICE_GRANT_SOCKET: '/run/cs/signer/grant.sock', SERVICE_APPROVER_SOCKET: '/run/cs/approval/approver.sock' }, '/x'),
    ).toThrow(ConfigError)
    expect(() =>
      socketConfigFromEnv({ SERVICE_SOCKET_MODE: '0660', SERVICE_SIGNER_SOCKET: '/run/cs/sign/signer.sock', SERVICE_GRANT_SOCKET: '/run/cs/approval/grant.sock', SERVICE_APPROVER_SOCKET: '/run/cs/approval/approver.sock' }, '/x'),
    ).toThrow(/same directory as SERVICE_APPROVER_SOCKET/)
    // One user for everything (0600): the default directory is fine.
    expect(socketConfigFromEnv({}, '/x').mode).toBe(0o600)
  })

  it('refuses grant.sock in the same directory spelled another way, or reached through a link', () => {
    // Found by review: the directories were compared as strings.
    for (const grant of ['/run/cs/./grant.sock', '/run/cs//grant.sock', '/run/other/../cs/grant.sock']) {
      expect(() => socketConfigFromEnv({ SERVICE_SOCKET_MODE: '0660', SERVICE_SIGNER_SOCKET: '/run/cs/signer.sock', SERVICE_GRANT_SOCKET: grant }, '/x'), grant).toThrow(/the gateway could mint approval tokens/)
    }
    const base = mkdtempSync(path.join(os.tmpdir(), 'cs-sockets-'))
    mkdirSync(path.join(base, 'sign'))
    symlinkSync(path.join(base, 'sign'), path.join(base, 'grant'))
    expect(() =>
      socketConfigFromEnv({ SERVICE_SOCKET_MODE: '0660', SERVICE_SIGNER_SOCKET: path.join(base, 'sign', 'signer.sock'), SERVICE_GRANT_SOCKET: path.join(base, 'grant', 'grant.sock'), SERVICE_APPROVER_SOCKET: '/run/cs/approval/approver.sock' }, '/x'),
    ).toThrow(/same directory as SERVICE_SIGNER_SOCKET/)
    rmSync(base, { recursive: true })
  })

  it('refuses relative paths and other modes, naming the variable', () => {
    expect(() => socketConfigFromEnv({ SERVICE_SIGNER_SOCKET: 'signer.sock' }, '/x')).toThrow(/SERVICE_SIGNER_SOCKET must be an absolute path/)
    expect(() => socketConfigFromEnv({ SERVICE_SOCKET_MODE: '0666' }, '/x')).toThrow(ConfigError)
  })
})
