import type { Pkcs11Config } from '../config.js'
import { readPassphraseFile } from '../keystore/passphrase.js'
import type { KeyBackend } from '../signing/keyBackend.js'
import { openPkcs11Backend } from './pkcs11Backend.js'
import { loadPkcs11Lib, moduleRefusalAsOperatorError } from './token.js'

/** The PKCS#11 backend of the signer's configuration: pkcs11js loaded now, the PIN read from its 0600 file. */
export async function openConfiguredPkcs11(config: Pkcs11Config, env: Record<string, string | undefined>, log: (msg: string, fields?: Record<string, unknown>) => void): Promise<KeyBackend> {
  const pin = readPassphraseFile(config.pinFile, env, 'SERVICE_PKCS11_PIN_FILE')
  const lib = await loadPkcs11Lib()
  try {
    return await openPkcs11Backend(lib, { modulePath: config.modulePath, tokenLabel: config.tokenLabel, pin, sessions: config.sessions, log })
  } catch (err) {
    throw moduleRefusalAsOperatorError(lib, err)
  }
}
