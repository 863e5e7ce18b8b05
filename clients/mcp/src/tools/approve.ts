// countersign_approve: an ERC-20 allowance.
import { approve } from '@countersign/client'
import { intentOptions, type RegisterTool } from '../context.js'
import { inSmallestUnits } from '../format.js'
import { assetOf } from '../asset.js'
import { address, decimals, smallestUnits, symbol } from '../schemas.js'
import { registerSendTool } from '../send.js'

export const registerApprove: RegisterTool = (server, ctx) => {
  registerSendTool(
    server,
    ctx,
    'countersign_approve',
    {
      title: 'Approve an ERC-20 allowance',
      description:
        'Let a spender (typically a swap router) move up to `amount` of the wallet\'s token, as needed before countersign_swap sells that token. Approve only what the next swaps need: an allowance is an outflow and policy limits it like a transfer; unlimited allowances need an operator. Waits for operator approval when policy asks (up to 5 minutes, with progress), then signs, broadcasts and waits for the receipt.',
      inputSchema: {
        token: address('ERC-20 token contract address.'),
        spender: address('Who may spend: for a swap, the router address (countersign_swap uses the chain\'s router unless told otherwise).'),
        amount: smallestUnits('Allowance'),
        decimals: decimals('the token'),
        symbol: symbol('the token'),
      },
    },
    (args) => ({
      intent: approve({
        ...intentOptions(ctx, args),
        token: assetOf(args.token, args.symbol, args.decimals),
        spender: args.spender as `0x${string}`,
        amount: args.amount,
      }),
      what: `approve ${args.spender} to spend ${inSmallestUnits(args.amount)} of token ${args.token}`,
    }),
  )
}
