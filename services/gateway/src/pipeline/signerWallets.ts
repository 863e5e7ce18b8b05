import { addressSchema, createAjv, describeValidationErrors, signerMethods, type Clock } from '@countersign/shared'

/** The part of the signer client this needs (signAndSend's SignerCaller). */
interface AccountsCaller {
  call<T>(method: string, params: unknown, opts?: { timeoutMs?: number }): Promise<T>
}

/** How long a wallet the signer listed is taken as held without asking again. */
export const SIGNER_WALLETS_FRESH_MS = 30_000

/** A signer that does not answer `accounts` in this time is taken as unreachable (the request is refused, not held). */
const ACCOUNTS_TIMEOUT_MS = 3_000

/** The signer could not be asked (or answered nonsense), and it has never listed the wallet. */
export class SignerWalletsUnknownError extends Error {
  override name = 'SignerWalletsUnknownError'
}

/** Which wallets the signer holds a key for. */
export interface SignerWallets {
  /** Whether the signer holds a key for `address`; throws SignerWalletsUnknownError when that cannot be told. */
  holds(address: string): Promise<boolean>
}

// Only the addresses are read; the signer's other fields (label, dev, backend) are its own business here.
const checkAccounts = createAjv().compile<Array<{ address: string }>>({
  type: 'array',
  items: { type: 'object', required: ['address'], properties: { address: addressSchema } },
})

async function listedAddresses(signer: AccountsCaller): Promise<ReadonlySet<string>> {
  const answer = await signer.call<unknown>(signerMethods.accounts, {}, { timeoutMs: ACCOUNTS_TIMEOUT_MS })
  if (!checkAccounts(answer)) throw new Error(`the signer answered accounts with ${describeValidationErrors(checkAccounts.errors, 'result')}`)
  return new Set(answer.map((account) => account.address.toLowerCase()))
}

/**
 * The signer's wallets, from its `accounts` method. A listed wallet counts as
 * held for SIGNER_WALLETS_FRESH_MS; anything else asks the signer again (one
 * call at a time, shared by everyone waiting), so a key the signer gained
 * since (it loads keys when it starts) is found at once. When the signer
 * cannot be asked, a wallet it listed before still counts: keys change only
 * with a signer restart, and signing refuses a key that is gone anyway.
 */
export function createSignerWallets(signer: AccountsCaller, clock: Clock): SignerWallets {
  let known: { addresses: ReadonlySet<string>; at: number } | null = null
  let asking: Promise<ReadonlySet<string>> | null = null
  const askSigner = (): Promise<ReadonlySet<string>> => {
    asking ??= listedAddresses(signer)
      .then((addresses) => {
        known = { addresses, at: clock() }
        return addresses
      })
      .finally(() => {
        asking = null
      })
    return asking
  }
  return {
    async holds(address) {
      const wanted = address.toLowerCase()
      const listedBefore = known?.addresses.has(wanted) ?? false
      if (listedBefore && clock() - known!.at < SIGNER_WALLETS_FRESH_MS) return true
      try {
        return (await askSigner()).has(wanted)
      } catch (err) {
        if (listedBefore) return true
        throw new SignerWalletsUnknownError((err as Error).message)
      }
    },
  }
}
