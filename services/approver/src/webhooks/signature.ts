import { createHmac, timingSafeEqual } from 'node:crypto'

/** The header a receiver checks (Stripe-style): t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>. */
export const SIGNATURE_HEADER = 'x-countersign-signature'

/** How old a signed delivery a receiver should still accept (documented in docs/webhooks.md). */
export const REPLAY_WINDOW_SECONDS = 300

export function signatureOf(secret: string, unixSeconds: number, body: string): string {
  return createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')
}

export function signatureHeader(secret: string, unixSeconds: number, body: string): string {
  return `t=${unixSeconds},v1=${signatureOf(secret, unixSeconds, body)}`
}

/**
 * What a receiver does (and what the tests use as the receiver): the header
 * parses, the timestamp is within the replay window, the HMAC matches in
 * constant time.
 */
export function verifySignature(secret: string, header: string | undefined, body: string, nowSeconds: number, windowSeconds = REPLAY_WINDOW_SECONDS): boolean {
  const m = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec(header ?? '')
  if (!m) return false
  const t = Number(m[1])
  if (Math.abs(nowSeconds - t) > windowSeconds) return false
  const expected = Buffer.from(signatureOf(secret, t, body), 'hex')
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'))
}
