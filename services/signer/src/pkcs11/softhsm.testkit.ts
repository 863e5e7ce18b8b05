// Tests only: a SoftHSM2 token in a temporary directory, as an operator trying the PKCS#11 backend would set one up.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so'

export interface SoftHsmToken {
  dir: string
  /** The token directory SoftHSM keeps its objects in; removing it is unplugging the token. */
  tokenDir: string
  label: string
  pin: string
  pinFile: string
  /** What the signer and the key CLI need to use the token. */
  env: Record<string, string>
  /** Removes the token directory, keeping a copy, and puts it back. */
  unplug(): void
  plugBack(): void
}

export function initSoftHsmToken(label = 'countersign-test'): SoftHsmToken {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-softhsm-'))
  const tokenDir = path.join(dir, 'tokens')
  const saved = path.join(dir, 'unplugged')
  mkdirSync(tokenDir, { mode: 0o700 })
  const conf = path.join(dir, 'softhsm2.conf')
  writeFileSync(conf, `directories.tokendir = ${tokenDir}\nobjectstore.backend = file\nlog.level = ERROR\n`)
  const pin = '4711-test-pin'
  const env = { SOFTHSM2_CONF: conf }
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--so-pin', '8888-so-pin', '--pin', pin], { env: { ...env, PATH: process.env.PATH ?? '' }, stdio: 'pipe' })
  const pinFile = path.join(dir, 'pin')
  writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 })
  return {
    dir,
    tokenDir,
    label,
    pin,
    pinFile,
    env: { ...env, SERVICE_PKCS11_MODULE: SOFTHSM_MODULE, SERVICE_PKCS11_TOKEN_LABEL: label, SERVICE_PKCS11_PIN_FILE: pinFile },
    unplug() {
      cpSync(tokenDir, saved, { recursive: true })
      rmSync(tokenDir, { recursive: true, force: true })
    },
    plugBack() {
      cpSync(saved, tokenDir, { recursive: true })
      rmSync(saved, { recursive: true, force: true })
    },
  }
}
