// Type-only import: see errors.ts.
import type { FastifyInstance } from 'fastify'

/**
 * DNS-rebinding guard (DESIGN.md §3): a page on an attacker's domain that
 * resolves to 127.0.0.1 sends its own Host header; refuse anything that is not
 * the bind address or a loopback name.
 */
export function installHostGuard(app: FastifyInstance, bindHost: string): void {
  const allowed = new Set(['localhost', '127.0.0.1', '[::1]', '::1', normaliseHost(bindHost)])
  // Callback-style hooks: they run on every request, and skip a promise each.
  app.addHook('onRequest', (req, reply, done) => {
    const host = hostnameOf(req.headers.host)
    if (host === null || !allowed.has(host)) {
      reply.code(403).send({ error: 'host_not_allowed', message: `Host header "${req.headers.host ?? ''}" is not allowed; use localhost or ${bindHost}` })
      return
    }
    done()
  })
}

function normaliseHost(h: string): string {
  return h.includes(':') && !h.startsWith('[') ? `[${h.toLowerCase()}]` : h.toLowerCase()
}

export function hostnameOf(header: string | undefined): string | null {
  if (!header) return null
  const h = header.trim().toLowerCase()
  if (h.startsWith('[')) {
    const end = h.indexOf(']')
    return end === -1 ? null : h.slice(0, end + 1)
  }
  const colon = h.lastIndexOf(':')
  return colon === -1 ? h : h.slice(0, colon)
}
