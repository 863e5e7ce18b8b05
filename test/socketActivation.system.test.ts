// systemd socket activation (deploy/systemd/*.socket): the gateway and the
// approver serve on the listening socket they are handed as fd 3 with
// LISTEN_FDS / LISTEN_PID, so the service manager keeps the port bound while
// they restart and no other local user can take it in between (a dashboard
// reconnects by itself and would send that user the operator token). Here
// the test plays systemd: it binds the port, hands the socket over and keeps
// a copy in a process that never accepts (systemd's role), so the port stays
// bound while the service is down. (Starting the service again on the same
// socket is the first start once more: systemd hands the same fd 3.)
import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { spawnService, type ServiceProcess } from './support/processes.js'
import { entries, Stack } from './support/stack.js'

const running: Array<ServiceProcess | ChildProcess> = []
afterEach(async () => {
  for (const p of running.splice(0)) {
    if ('stop' in p) await p.stop()
    else p.kill('SIGKILL')
  }
})

/** A listening socket on 127.0.0.1, its port, and its fd in this process. */
async function listeningSocket(): Promise<{ server: net.Server; port: number; fd: number }> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  return { server, port, fd: (server as unknown as { _handle: { fd: number } })._handle.fd }
}

/** A process that only holds the socket (as systemd does for a .socket unit) and never accepts on it. */
function holdSocket(fd: number): ChildProcess {
  const holder = spawn('sleep', ['600'], { stdio: ['ignore', 'ignore', 'ignore', fd] })
  running.push(holder)
  return holder
}

async function bindFails(port: number): Promise<string | null> {
  const squatter = net.createServer()
  return new Promise((resolve) => {
    squatter.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
    squatter.listen(port, '127.0.0.1', () => squatter.close(() => resolve(null)))
  })
}

describe('socket activation', () => {
  it.each([
    ['gateway', 'SERVICE_PORT', '/v1/health'],
    ['approver', 'SERVICE_APPROVER_PORT', '/v1/approvals/pending'],
  ] as const)('the %s serves on the socket it is handed (it would fail to bind the held port itself); killed, the port stays bound by the holder and nobody else can take it', async (name, portVariable, probe) => {
    const stack = new Stack()
    const { server, port, fd } = await listeningSocket()
    holdSocket(fd)
    const start = () => {
      const p = spawnService({ name: `${name}-activated`, entry: entries[name], env: { ...stack.env, [portVariable]: String(port), SERVICE_OPERATOR_AUTH: 'off' }, listenFd: fd })
      running.push(p)
      return p
    }
    const first = start()
    // This process stops listening: from here on only the service accepts on the socket.
    await new Promise((r) => server.close(r))
    const answers = async () => (await fetch(`http://127.0.0.1:${port}${probe}`).catch(() => null))?.status ?? null
    await expect.poll(answers, { timeout: 20_000, interval: 100 }).not.toBeNull()
    expect(await answers()).toBeLessThan(500)

    first.kill('SIGKILL')
    await first.exited()
    // Down, yet nobody else can take the port: systemd (here, the holder) keeps it bound.
    expect(await bindFails(port)).toBe('EADDRINUSE')
  })

  it('a handed socket on another address than the configuration says is refused at start, in one line', async () => {
    const stack = new Stack()
    const { server, port, fd } = await listeningSocket()
    try {
      const gw = spawnService({ name: 'gateway-activated-mismatch', entry: entries.gateway, env: { ...stack.env, SERVICE_PORT: String(port === 65535 ? 65534 : port + 1) }, listenFd: fd })
      running.push(gw)
      expect(await gw.exited()).not.toBe(0)
      expect(gw.output()).toContain(`the socket systemd passed (LISTEN_FDS) listens on 127.0.0.1:${port}, but the configuration says 127.0.0.1:${port === 65535 ? 65534 : port + 1}`)
      expect(gw.output()).not.toMatch(/\n\s+at /)
    } finally {
      server.close()
    }
  })
})
