// Type-only import: see errors.ts.
import { isIPv6 } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { simpleErrorBody } from './errorBodies.js'

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
      // Serialised here: a route's own 403 schema (build's policy_denied) does not describe this body, and
      // serialising it by that schema was a 500 (found by review).
      reply.code(403).type('application/json; charset=utf-8').send(JSON.stringify(hostNotAllowedBody(req.headers.host, bindHost)))
      return
    }
    done()
  })
}

/** The DNS-rebinding guard's refusal (403), also written on refused WebSocket upgrades. */
export const hostNotAllowedBody = (header: string | undefined, bindHost: string) =>
  simpleErrorBody('host_not_allowed', `Host header "${header ?? ''}" is not allowed; use localhost or ${bindHost}`)

function normaliseHost(h: string): string {
  return h.includes(':') && !h.startsWith('[') ? `[${h.toLowerCase()}]` : h.toLowerCase()
}

// RFC 3986 `host [":" port]`, narrowed to what a browser sends for a loopback
// service: a bracketed IPv6 literal, or a DNS name / IPv4 address (letters,
// digits, dots and hyphens), then an optional numeric port. Userinfo ("@"),
// anything after the closing bracket, spaces and every other character make
// the header malformed.
const HOST_HEADER = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?))(?::([0-9]{1,5}))?$/

/**
 * The host part of a Host header, lower-cased (an IPv6 literal keeps its
 * brackets), or null when the header is missing or not a valid host[:port].
 */
export function hostnameOf(header: string | undefined): string | null {
  if (header === undefined) return null
  const m = HOST_HEADER.exec(header.toLowerCase())
  if (!m) return null
  const [, ipv6, name, port] = m
  if (port !== undefined && Number(port) > 65535) return null
  if (ipv6 !== undefined) return isIPv6(ipv6) ? `[${ipv6}]` : null
  return name!
}
