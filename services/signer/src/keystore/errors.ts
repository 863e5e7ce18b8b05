import { OperatorError } from '@countersign/shared'

/** Base class of every keystore failure; messages are safe to print (never key material). */
export class KeystoreError extends OperatorError {
  override name = 'KeystoreError'
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
