// The structured content of each tool's success result, declared as the
// tool's outputSchema so a host knows its shape (the SDK checks every result
// against it). Error results carry {error, status, message, reasons, body}.
import { z } from 'zod'

export const sendOutput = {
  intentId: z.string().describe('The intent id (retrying with the same intent never signs twice).'),
  description: z.string().describe("countersign's description of the transaction (on-chain symbols and decimals)."),
  txHash: z.string(),
  chainId: z.number().int(),
  status: z.enum(['success', 'reverted']),
  blockNumber: z.number().int(),
  gasUsed: z.string(),
  approval: z.object({ required: z.boolean().describe('Whether an operator had to approve.'), approvalTokenId: z.string().optional() }),
  riskScore: z.number(),
  warnings: z.array(z.string()),
  repeated: z.boolean().optional().describe('true: an identical call made shortly before was sent as this same intent; this is its transaction, not a new one.'),
}

export const balanceOutput = {
  token: z.string().describe('The token, or the native pseudo address 0xEeee…EEeE.'),
  native: z.boolean(),
  account: z.string(),
  chainId: z.number().int(),
  balance: z.string().describe('In the smallest unit.'),
  decimals: z.number().int().optional(),
}

export const txStatusOutput = {
  txHash: z.string(),
  state: z.enum(['pending', 'mined']),
  status: z.enum(['success', 'reverted']).optional(),
  blockNumber: z.number().int().optional(),
  gasUsed: z.string().optional(),
  chainId: z.number().int().optional(),
  from: z.string().optional(),
  to: z.string().nullable().optional(),
}

export const pendingOutput = {
  pending: z.array(
    z.object({ requestId: z.string(), action: z.string(), riskScore: z.number(), warnings: z.array(z.string()), ttlSeconds: z.number(), intentId: z.string().optional() }),
  ),
}

export const preflightOutput = {
  simulationSuccess: z.boolean(),
  riskScore: z.number(),
  gasEstimate: z.string().nullable(),
  warnings: z.array(z.string()),
  balanceDiffs: z.array(z.object({ token: z.string(), change: z.string().describe('Signed, in the smallest unit; negative leaves the wallet.') })),
  revertReason: z.string().nullable().optional(),
  riskFactors: z.array(z.object({ id: z.string(), weight: z.number(), detail: z.string() })).optional(),
  wallet: z.string(),
  chainId: z.number().int(),
}

export const intentStatusOutput = {
  intentId: z.string(),
  found: z.boolean().describe('Whether countersign signed a transaction for this intent.'),
  txHash: z.string().optional(),
  broadcast: z.boolean().optional().describe('false: signed, but countersign has no word that the node took it (being sent, or refused).'),
  state: z.enum(['pending', 'mined']).optional(),
  status: z.enum(['success', 'reverted']).optional(),
  blockNumber: z.number().int().optional(),
  receiptError: z.string().optional().describe('Set when the transaction was found but its receipt could not be read now (the error code): signed and sent, state unknown.'),
}
