import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadWebhookTarget } from './webhookConfig.js'

const SECRET = 'a'.repeat(32)

describe('loadWebhookTarget', () => {
  it('is off without a URL, and needs a secret with one', () => {
    expect(loadWebhookTarget({})).toBeNull()
    expect(() => loadWebhookTarget({ SERVICE_WEBHOOK_URL: 'http://127.0.0.1:9/h' })).toThrow(/SERVICE_WEBHOOK_SECRET/)
    expect(() => loadWebhookTarget({ SERVICE_WEBHOOK_URL: 'ftp://x/h', SERVICE_WEBHOOK_SECRET: SECRET })).toThrow(/SERVICE_WEBHOOK_URL must be an http:\/\/ or https:\/\/ URL/)
    expect(() => loadWebhookTarget({ SERVICE_WEBHOOK_URL: 'https://u:p@x/h', SERVICE_WEBHOOK_SECRET: SECRET })).toThrow(/credentials/)
    expect(() => loadWebhookTarget({ SERVICE_WEBHOOK_URL: 'https://x/h', SERVICE_WEBHOOK_SECRET: 'short' })).toThrow(/at least 16/)
    expect(loadWebhookTarget({ SERVICE_WEBHOOK_URL: 'https://x/h', SERVICE_WEBHOOK_SECRET: SECRET })).toEqual({ url: 'https://x/h', secret: SECRET, backoffBaseMs: 5000 })
  })

  it('reads the secret from a 0600 file and refuses a file others can read', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cs-webhook-'))
    const file = path.join(dir, 'secret')
    writeFileSync(file, SECRET + '\n')
    chmodSync(file, 0o644)
    const env = { SERVICE_WEBHOOK_URL: 'https://x/h', SERVICE_WEBHOOK_SECRET_FILE: file }
    expect(() => loadWebhookTarget(env)).toThrow(/chmod 600/)
    chmodSync(file, 0o600)
    expect(loadWebhookTarget({ ...env, SERVICE_WEBHOOK_BACKOFF_MS: '200' })).toEqual({ url: 'https://x/h', secret: SECRET, backoffBaseMs: 200 })
    expect(() => loadWebhookTarget({ ...env, SERVICE_WEBHOOK_SECRET: SECRET })).toThrow(/not both/)
  })
})
