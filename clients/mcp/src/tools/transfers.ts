// countersign_transfer (ERC-20) and countersign_transfer_native.
import { transfer, transferNative } from '@countersign/client'
import { intentOptions, type RegisterTool } from '../context.js'
import { inSmallestUnits, showWei } from '../format.js'
import { assetOf } from '../asset.js'
import { address, decimals, smallestUnits, symbol, wei } from '../schemas.js'
import { registerSendTool } from '../send.js'

const APPROVAL_NOTE =
  'Policy decides; when it asks for a human, the call waits (up to 5 minutes) for an operator to approve on the countersign dashboard, reporting progress, then signs, broadcasts and waits for the receipt.'

export const registerTransfers: RegisterTool = (server, ctx) => {
  registerSendTool(
    server,
    ctx,
    'countersign_transfer',
    {
      title: 'Transfer an ERC-20 token',
      description: `Send an ERC-20 token from the wallet to a recipient. ${APPROVAL_NOTE} Returns the transaction hash and receipt.`,
      inputSchema: {
        token: address('ERC-20 token contract address.'),
        to: address('Recipient address.'),
        amount: smallestUnits('Amount to send'),
        decimals: decimals('the token'),
        symbol: symbol('the token'),
      },
    },
    (args) => ({
      intent: transfer({
        ...intentOptions(ctx, args),
        token: assetOf(args.token, args.symbol, args.decimals),
        to: args.to as `0x${string}`,
        amount: args.amount,
      }),
      what: `transfer ${inSmallestUnits(args.amount)} of token ${args.token} to ${args.to}`,
    }),
  )

  registerSendTool(
    server,
    ctx,
    'countersign_transfer_native',
    {
      title: 'Transfer the native currency (ETH)',
      description: `Send the chain's native currency (ETH on all supported chains) from the wallet. ${APPROVAL_NOTE}`,
      inputSchema: {
        to: address('Recipient address.'),
        amount: wei('Amount to send'),
      },
    },
    (args) => ({
      intent: transferNative({ ...intentOptions(ctx, args), to: args.to as `0x${string}`, amount: args.amount }),
      what: `transfer ${showWei(args.amount)} to ${args.to}`,
    }),
  )
}
