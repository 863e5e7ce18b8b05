import { SERVICE_VERSION } from '../../constants.js'

/**
 * Headers on every HTTP response of the gateway and the approver, whichever
 * layer writes it (a route, the error handler, the router's or the parser's
 * refusal, a refused WebSocket upgrade): which version answered, and no MIME
 * sniffing, so that a browser never renders a JSON body that echoes a
 * client's text (a skill name, an intent's note) as anything but JSON.
 */
export const responseHeaders = {
  'x-service-version': SERVICE_VERSION,
  'x-content-type-options': 'nosniff',
} as const

/** The same headers as raw HTTP/1.1 header lines, for answers written straight to a socket. */
export const responseHeaderLines: readonly string[] = Object.entries(responseHeaders).map(([name, value]) => `${name}: ${value}`)
