// Input fields shared by the tools, each described for a model: what it is,
// in which unit, and what happens when it is left out.
import { z } from 'zod'

export const address = (what: string) => z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an address: 0x followed by 40 hex digits').describe(what)

export const smallestUnits = (what: string) =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]{0,77})$/, 'a whole number of the smallest unit, as decimal digits without sign, point or leading zeros')
    .describe(`${what}, as a string of decimal digits in the token's smallest unit (no decimal point). With 6 decimals, 1.5 tokens is "1500000"; with 18 decimals, 1 token is "1000000000000000000".`)

export const decimals = (what: string) =>
  z.number().int().min(0).max(36).optional().describe(`Decimals of ${what} (USDC 6, most tokens 18), as you believe them. The service reads the real value from the chain, warns when yours differs, and describes the transaction with the chain's.`)

export const symbol = (what: string) => z.string().min(1).max(32).optional().describe(`Ticker of ${what}, for display only (the service shows the on-chain symbol to the operator).`)

export const chainId = z
  .union([z.literal(1), z.literal(10), z.literal(42161), z.literal(8453)])
  .optional()
  .describe('EVM chain id: 1 Ethereum, 10 Optimism, 42161 Arbitrum One, 8453 Base. Default: the server\'s configured chain (COUNTERSIGN_CHAIN_ID).')

export const wallet = address('The wallet that acts (its key is held by countersign). Default: the server\'s configured wallet (COUNTERSIGN_WALLET).').optional()

export const note = z.string().max(200).optional().describe('A short note shown to the operator who approves (why this transaction).')

export const newTransaction = z
  .boolean()
  .optional()
  .describe(
    'true only when the user wants another, separate transaction just like one you already made (a second equal payment on purpose). Leave it out otherwise. A call identical to one made in the last 15 minutes (same tool, wallet, chain and amounts; the note does not count) is sent as that same intent and returns its transaction, not a new one: that is how to retry a call that failed, timed out or was cancelled without paying twice. Never set it to retry.',
  )

export const txHash = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a transaction hash: 0x followed by 64 hex digits').describe('Transaction hash (0x + 64 hex), as returned by a send tool.')

export const wei = (what: string) =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]{0,77})$/, 'a whole number of wei, as decimal digits without sign, point or leading zeros')
    .describe(`${what} in wei, as decimal digits (18 decimals): 0.5 ETH is "500000000000000000", 1 gwei is "1000000000".`)
