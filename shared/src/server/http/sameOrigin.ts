/**
 * A browser's WebSocket is not bound by CORS: any page may open
 * ws://127.0.0.1:3100 and read what is pushed. Browsers always send Origin on
 * a WebSocket handshake, so a handshake whose Origin names another site than
 * the one the request was sent to (its Host, already limited to the bind
 * address and loopback names by the Host guard) comes from a foreign page.
 * No Origin at all is a non-browser client (countersign-approve, an SDK);
 * those still need the operator token.
 */
export function sameOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined) return true
  if (!host) return false
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    // "null" (sandboxed frames, file: pages) and garbage.
    return false
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
  return url.host === host.trim().toLowerCase()
}
