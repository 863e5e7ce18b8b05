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
  it('refuses relative paths and other modes, naming the variable', () => {
    expect(() => socketConfigFromEnv({ SERVICE_SIGNER_SOCKET: 'signer.sock' }, '/x')).toThrow(/SERVICE_SIGNER_SOCKET must be an absolute path/)
    expect(() => socketConfigFromEnv({ SERVICE_SOCKET_MODE: '0666' }, '/x')).toThrow(ConfigError)
  })
})
