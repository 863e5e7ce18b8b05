import { ConfigError, MIN_WEBHOOK_SECRET_LENGTH, readSecretFile, readVariable, VARIABLES, type Env } from '@countersign/shared'
import type { WebhookTarget } from './dispatcher.js'

/** A webhook setting the approver refuses at start. */
export class WebhookConfigError extends ConfigError {}
const MAX_SECRET_FILE_BYTES = 4096

/** Reads SERVICE_WEBHOOK_SECRET_FILE with the shared secret-file checks (0600, regular file, size cap). */
export function readWebhookSecretFile(file: string): string {
  return readSecretFile(file, { variable: 'SERVICE_WEBHOOK_SECRET_FILE', maxBytes: MAX_SECRET_FILE_BYTES, refuse: (message) => new WebhookConfigError(message) }).trim()
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
  const secret = file ? readWebhookSecretFile(file) : readVariable(env, 'SERVICE_WEBHOOK_SECRET')
  if (!secret) throw new WebhookConfigError('SERVICE_WEBHOOK_URL is set: SERVICE_WEBHOOK_SECRET or SERVICE_WEBHOOK_SECRET_FILE must give the signing secret')
  if (secret.length < MIN_WEBHOOK_SECRET_LENGTH) throw new WebhookConfigError(`the secret in SERVICE_WEBHOOK_SECRET_FILE must be ${VARIABLES.SERVICE_WEBHOOK_SECRET.form}`)
  return { url: url.toString(), secret, backoffBaseMs: readVariable(env, 'SERVICE_WEBHOOK_BACKOFF_MS') ?? 5000 }
}
