import { describe, expect, it } from 'vitest'
import { takeActivatedSocket } from './activatedSocket.js'

describe('takeActivatedSocket (sd_listen_fds)', () => {
  it('fd 3 when LISTEN_FDS=1 names this process, and the variables are taken out either way', () => {
    const env: NodeJS.ProcessEnv = { LISTEN_FDS: '1', LISTEN_PID: '4242', LISTEN_FDNAMES: 'gateway', OTHER: 'x' }
    expect(takeActivatedSocket(env, 4242)).toBe(3)
    expect(env).toEqual({ OTHER: 'x' })
  })

  it('none when nothing was passed, or it was passed to another process (a parent that exec()s without clearing them)', () => {
    expect(takeActivatedSocket({}, 1)).toBeNull()
    const env: NodeJS.ProcessEnv = { LISTEN_FDS: '1', LISTEN_PID: '99' }
    expect(takeActivatedSocket(env, 4242)).toBeNull()
    expect(env).toEqual({})
    expect(takeActivatedSocket({ LISTEN_FDS: '1' }, 4242)).toBeNull()
  })

  it('more than one socket is a configuration error, in one line', () => {
    expect(() => takeActivatedSocket({ LISTEN_FDS: '2', LISTEN_PID: '7' }, 7)).toThrow(/^LISTEN_FDS=2: a countersign service takes exactly one listening socket from systemd/)
  })
})
