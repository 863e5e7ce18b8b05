import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { OperatorError } from '../../operatorError.js'

/** sd_listen_fds(3): the first socket a service manager passes is file descriptor 3. */
const SD_LISTEN_FDS_START = 3

/**
 * The listening socket systemd passed (socket activation: LISTEN_FDS and
 * LISTEN_PID naming this process), or null when none was passed. The
 * variables are taken out of `env`, as sd_listen_fds does, so no child
 * process believes the socket is its own.
 */
export function takeActivatedSocket(env: NodeJS.ProcessEnv = process.env, pid = process.pid): number | null {
  const count = env.LISTEN_FDS
  const forPid = env.LISTEN_PID
  delete env.LISTEN_FDS
  delete env.LISTEN_PID
  delete env.LISTEN_FDNAMES
  if (count === undefined || count === '' || forPid !== String(pid)) return null
  if (count !== '1') {
    throw new OperatorError(`LISTEN_FDS=${count}: a countersign service takes exactly one listening socket from systemd (one .socket unit with one ListenStream=)`)
  }
  return SD_LISTEN_FDS_START
}

/** The loopback names that mean the same address (SERVICE_HOST=localhost, a socket on 127.0.0.1). */
const sameHost = (configured: string, actual: string): boolean =>
  configured === actual || (configured === 'localhost' && (actual === '127.0.0.1' || actual === '::1'))

/**
 * Listens on the socket systemd holds for this service when it passed one,
 * else binds host:port. A socket held by the service manager stays bound
 * while the service restarts, so no other local user can take the port in
 * between and be sent the dashboard's operator token (the feed reconnects by
 * itself) or serve its own page at the dashboard's origin. The passed
 * socket must be the configured address: the Host check and every printed
 * URL follow SERVICE_HOST and the port.
 */
export async function listenHttp(
  app: FastifyInstance,
  where: { host: string; port: number; portVariable?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<'activated' | 'bound'> {
  const fd = takeActivatedSocket(env)
  if (fd === null) {
    try {
      await app.listen({ host: where.host, port: where.port })
    } catch (err) {
      // Said with the variable that moves it, as the dev chain's "port 8545 is taken" is (found by review).
      if ((err as { code?: unknown }).code === 'EADDRINUSE' && where.portVariable) {
        throw new OperatorError(`${where.host}:${where.port} is already in use (another countersign, or another program): stop it, or set ${where.portVariable} to a free port`)
      }
      throw err
    }
    return 'bound'
  }
  await app.ready()
  await new Promise<void>((resolve, reject) => {
    app.server.once('error', reject)
    app.server.listen({ fd }, () => {
      app.server.off('error', reject)
      resolve()
    })
  })
  const address = app.server.address() as AddressInfo | string | null
  const actual = address && typeof address === 'object' ? address : null
  if (!actual || !sameHost(where.host, actual.address) || (where.port !== 0 && actual.port !== where.port)) {
    await app.close()
    const shown = actual ? `${actual.address}:${actual.port}` : String(address)
    throw new OperatorError(`the socket systemd passed (LISTEN_FDS) listens on ${shown}, but the configuration says ${where.host}:${where.port}: make the .socket unit's ListenStream= and SERVICE_HOST / the port the same`)
  }
  return 'activated'
}
