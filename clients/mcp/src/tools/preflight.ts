// countersign_preflight: simulate an action and score its risk, without signing.
import { intentFor, type Action, type Address } from '@countersign/client'
import { z } from 'zod'
import { chainOf, intentOptions, type RegisterTool } from '../context.js'
import { preflightOutput } from '../outputs.js'
import { failed, ok } from '../results.js'
import { untrustedLine, untrustedList, word } from '../untrusted.js'
import { address, chainId, smallestUnits, wallet, wei } from '../schemas.js'
import { routerFor } from './swap.js'

const asset = z.object({ kind: z.literal('erc20').default('erc20'), address: address('Token contract address.'), symbol: z.string().min(1).max(32).optional(), decimals: z.number().int().min(0).max(36).optional() }).describe('An ERC-20 token.')
const provider = z.enum(['v3_router', 'aggregator']).optional()
const router = address('Swap router. Default: the chain\'s v3 router; with provider "aggregator" on swap_exact_in, the aggregator router.').optional()

const action = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('transfer'), asset, to: address('Recipient.'), amount: smallestUnits('Amount') }),
    z.object({ type: z.literal('transfer_native'), to: address('Recipient.'), amount: wei('Amount') }),
    z.object({ type: z.literal('approve'), asset, spender: address('Spender.'), amount: smallestUnits('Allowance') }),
    z.object({ type: z.literal('swap_exact_in'), router, provider, assetIn: asset, assetOut: asset, amountIn: smallestUnits('Amount sold'), minAmountOut: smallestUnits('Least amount bought') }),
    z.object({ type: z.literal('swap_exact_out'), router, provider, assetIn: asset, assetOut: asset, amountOut: smallestUnits('Amount bought'), maxAmountIn: smallestUnits('Most amount sold') }),
  ])
  .describe('The action, as countersign takes it: type transfer | transfer_native | approve | swap_exact_in | swap_exact_out with its fields. Amounts in smallest units.')

export const registerPreflight: RegisterTool = (server, ctx) => {
  server.registerTool(
    'countersign_preflight',
    {
      title: 'Simulate a transaction',
      description:
        'Dry run: builds the transaction for an action, simulates it on the chain and scores its risk (0-100), without signing or asking anyone. Shows whether it would succeed, the revert reason if not, the balance changes per token (smallest units, negative = leaves the wallet), gas estimate and warnings. Use it before a swap to pick minAmountOut / maxAmountIn.',
      inputSchema: { action, wallet, chainId },
      outputSchema: preflightOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async (args) => {
      try {
        const chain = chainOf(ctx, args.chainId)
        const a = args.action
        const act = (a.type === 'swap_exact_in' || a.type === 'swap_exact_out' ? { ...a, router: a.router ?? routerFor(ctx, chain, a.provider, a.type) } : a) as Action
        const intent = intentFor(act, intentOptions(ctx, args))
        const p = await ctx.client.preflight(intent)
        // The revert reason is whatever the contract chose to say, and warnings name on-chain symbols: quoted, one line each.
        const lines = [
          `Simulation ${p.simulationSuccess ? 'succeeded' : 'FAILED'}; risk score ${p.riskScore}/100; gas estimate ${word(String(p.gasEstimate))}.`,
          ...(p.revertReason ? [untrustedLine('revert reason', p.revertReason)] : []),
          p.balanceDiffs.length ? `Balance changes of ${intent.wallet.address} (smallest units):\n${p.balanceDiffs.map((d) => `- ${word(d.token)}: ${word(d.change)}`).join('\n')}` : 'No balance change predicted.',
          ...untrustedList('warnings', p.warnings),
        ]
        return ok(lines.join('\n'), {
          simulationSuccess: p.simulationSuccess,
          riskScore: p.riskScore,
          gasEstimate: p.gasEstimate,
          warnings: p.warnings,
          balanceDiffs: p.balanceDiffs,
          ...(p.revertReason !== undefined ? { revertReason: p.revertReason } : {}),
          ...(p.riskFactors ? { riskFactors: p.riskFactors } : {}),
          wallet: intent.wallet.address as Address,
          chainId: chain,
        })
      } catch (err) {
        return failed(err)
      }
    },
  )
}
