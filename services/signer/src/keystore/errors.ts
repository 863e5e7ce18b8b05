import { OperatorError } from '@countersign/shared'
import { printableLabel } from './format.js'

/**
 * Base class of every keystore failure; messages are safe to print (never key
 * material). A message can carry what a key file holds or is called (a file
 * name, a field name, a value): every control, format and separator character
 * in it is shown as its escape, so a file put in the keystore cannot write
 * terminal escapes through countersign-keys or the signer's start-up
 * message (found by review: a file named with ESC ] 0 ; … retitled the
 * terminal and cleared it).
 */
export class KeystoreError extends OperatorError {
  override name = 'KeystoreError'
  constructor(message: string, options?: ErrorOptions) {
    super(printableLabel(message), options)
  }
}

/** A key file that is unreadable, malformed, or misnamed. The message names the file. */
export class KeyFileError extends KeystoreError {
  override name = 'KeyFileError'
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message)
  }
}

/**
 * A key that does not decrypt: wrong passphrase, or a file that was altered.
 * The message names the key's address and its file. (`name` stays
 * 'KeystoreError', the name the signer's start-up prints without a stack.)
 */
export class KeystoreUnlockError extends KeystoreError {
  constructor(
    readonly address: string,
    readonly file: string,
  ) {
    super(`cannot unlock key ${address} (${file}): wrong passphrase, or the file was altered`)
  }
}
