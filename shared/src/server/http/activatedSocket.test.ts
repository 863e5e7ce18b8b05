import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { OperatorError } from '../../operatorError.js'
import { listenHttp, takeActivatedSocket } from './activatedSocket.js'

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

describe('listenHttp without systemd', () => {
  it('a port already in use is one line naming the variable that moves it', async () => {
    const taken = Fastify()
    await taken.listen({ host: '127.0.0.1', port: 0 })
    const port = (taken.server.address() as AddressInfo).port
    const app = Fastify()
    try {
      const err = await listenHttp(app, { host: '127.0.0.1', port, portVariable: 'SERVICE_PORT' }, {}).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(OperatorError)
      expect((err as Error).message).toBe(`127.0.0.1:${port} is already in use (another countersign, or another program): stop it, or set SERVICE_PORT to a free port`)
    } finally {
      await app.close()
      await taken.close()
    }
  })
})
