import { createHash } from 'node:crypto'

/**
 * The Content-Security-Policy the dashboard is served with. Its one inline
 * script is allowed by its SHA-256 hash, not by 'unsafe-inline': markup that
 * ever reached the page from a card (an event-handler attribute, a
 * javascript: URL, a <script> element) would not run, whatever the
 * page's own escaping does. Computed once from the HTML it is served with.
 */
export function dashboardPolicy(html: string): string {
  const hashes = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]!, 'utf8').digest('base64')}'`)
  if (hashes.length === 0) throw new Error('the dashboard has no inline script to allow')
  return [
    "default-src 'none'",
    `script-src ${hashes.join(' ')}`,
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}
