import { closeSync, fstatSync, openSync, readFileSync, constants } from 'node:fs'
import { ConfigError, MIN_WEBHOOK_SECRET_LENGTH, readVariable, VARIABLES, type Env } from '@countersign/shared'
import type { WebhookTarget } from './dispatcher.js'

/** A webhook setting the approver refuses at start. */
export class WebhookConfigError extends ConfigError {}
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
export function loadWebhookTarget(env: Env): WebhookTarget | null {
  const raw = readVariable(env, 'SERVICE_WEBHOOK_URL')
  if (!raw) return null
  const url = new URL(raw)
  if (url.username || url.password) throw new WebhookConfigError('SERVICE_WEBHOOK_URL must not carry credentials; the receiver checks the signature instead')
  const file = readVariable(env, 'SERVICE_WEBHOOK_SECRET_FILE')
  const inline = env.SERVICE_WEBHOOK_SECRET?.trim()
  if (file && inline) throw new WebhookConfigError('set SERVICE_WEBHOOK_SECRET or SERVICE_WEBHOOK_SECRET_FILE, not both')
  const secret = file ? readSecretFile(file) : readVariable(env, 'SERVICE_WEBHOOK_SECRET')
  if (!secret) throw new WebhookConfigError('SERVICE_WEBHOOK_URL is set: SERVICE_WEBHOOK_SECRET or SERVICE_WEBHOOK_SECRET_FILE must give the signing secret')
  if (secret.length < MIN_WEBHOOK_SECRET_LENGTH) throw new WebhookConfigError(`the secret in SERVICE_WEBHOOK_SECRET_FILE must be ${VARIABLES.SERVICE_WEBHOOK_SECRET.form}`)
  return { url: url.toString(), secret, backoffBaseMs: readVariable(env, 'SERVICE_WEBHOOK_BACKOFF_MS') ?? 5000 }
}
