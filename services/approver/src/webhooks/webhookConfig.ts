import { closeSync, fstatSync, openSync, readFileSync, constants } from 'node:fs'
import type { WebhookTarget } from './dispatcher.js'

export class WebhookConfigError extends Error {
  override name = 'ConfigError'
}

const MIN_SECRET_LENGTH = 16
const MAX_SECRET_FILE_BYTES = 4096

/** Reads SERVICE_WEBHOOK_SECRET_FILE: a regular file, 0600 (no group or other bits), like the passphrase file. */
export function readSecretFile(file: string): string {
  const label = `SERVICE_WEBHOOK_SECRET_FILE ${file}`
  let fd: number
  try {
    fd = openSync(file, constants.O_RDONLY)
  } catch (err) {
    throw new WebhookConfigError(`cannot read ${label}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw new WebhookConfigError(`${label} is not a regular file`)
    if ((st.mode & 0o077) !== 0) throw new WebhookConfigError(`${label} is readable by group or others (mode ${(st.mode & 0o777).toString(8)}); run: chmod 600 ${file}`)
    if (st.size > MAX_SECRET_FILE_BYTES) throw new WebhookConfigError(`${label} is larger than ${MAX_SECRET_FILE_BYTES} bytes`)
    return readFileSync(fd, 'utf8').trim()
  } finally {
    closeSync(fd)
  }
}

/** SERVICE_WEBHOOK_URL, its secret (env or file) and the retry base; null when no URL is set. */
export function loadWebhookTarget(env: Record<string, string | undefined>): WebhookTarget | null {
  const raw = env.SERVICE_WEBHOOK_URL?.trim()
  if (!raw) return null
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new WebhookConfigError(`SERVICE_WEBHOOK_URL must be an http(s) URL; got "${raw}"`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookConfigError(`SERVICE_WEBHOOK_URL must be an http(s) URL; got "${raw}"`)
  if (url.username || url.password) throw new WebhookConfigError('SERVICE_WEBHOOK_URL must not carry credentials; the receiver checks the signature instead')
  const file = env.SERVICE_WEBHOOK_SECRET_FILE?.trim()
  const inline = env.SERVICE_WEBHOOK_SECRET?.trim()
  if (file && inline) throw new WebhookConfigError('set SERVICE_WEBHOOK_SECRET or SERVICE_WEBHOOK_SECRET_FILE, not both')
  const secret = file ? readSecretFile(file) : inline
  if (!secret) throw new WebhookConfigError('SERVICE_WEBHOOK_URL is set: SERVICE_WEBHOOK_SECRET or SERVICE_WEBHOOK_SECRET_FILE must give the signing secret')
  if (secret.length < MIN_SECRET_LENGTH) throw new WebhookConfigError(`the webhook secret must be at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32)`)
  const backoffRaw = env.SERVICE_WEBHOOK_BACKOFF_MS?.trim() || '5000'
  if (!/^[0-9]{1,7}$/.test(backoffRaw) || Number(backoffRaw) < 100) throw new WebhookConfigError(`SERVICE_WEBHOOK_BACKOFF_MS must be 100 to 9999999 (ms); got "${backoffRaw}"`)
  return { url: url.toString(), secret, backoffBaseMs: Number(backoffRaw) }
}
