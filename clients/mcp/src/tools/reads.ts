// countersign_balance, countersign_tx_status, countersign_intent_status, countersign_pending: reads, no signature.
import { NATIVE_TOKEN_ADDRESS, type Address } from '@countersign/client'
import { z } from 'zod'
import { chainOf, walletOf, type RegisterTool } from '../context.js'
import { showAmount, showWei } from '../format.js'
import { balanceOutput, intentStatusOutput, pendingOutput, txStatusOutput } from '../outputs.js'
import { CountersignError } from '@countersign/client'
import { READ_SAYS_NOTHING_SENT, ok, readFailed } from '../results.js'
import { UNTRUSTED, quoted, word } from '../untrusted.js'
import { address, chainId, decimals, symbol, txHash } from '../schemas.js'

export const registerReads: RegisterTool = (server, ctx) => {
  server.registerTool(
    'countersign_balance',
    {
      title: 'Token or native balance',
      description: 'Balance of an account: an ERC-20 token when `token` is given, otherwise the chain\'s native currency (ETH, in wei). Amounts are in the smallest unit; pass `decimals` to also see the human amount.',
      inputSchema: {
        token: address('ERC-20 token contract address. Omit for the native currency.').optional(),
        account: address('Whose balance. Default: the configured wallet (COUNTERSIGN_WALLET).').optional(),
        decimals: decimals('the token'),
        symbol: symbol('the token'),
        chainId,
      },
      outputSchema: balanceOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async (args) => {
      try {
        const account = walletOf(ctx, args.account)
        const chain = chainOf(ctx, args.chainId)
        const b = await ctx.client.balance((args.token as Address | undefined) ?? 'native', account, { chainId: chain })
        const native = !args.token
        const shown = native ? showWei(b.balance) : showAmount(b.balance, args.decimals, args.symbol)
        const text = `Balance of ${b.account} on chain ${b.chainId}: ${shown}${native ? ' (native currency)' : ` of token ${b.token}`}`
        return ok(text, { token: native ? NATIVE_TOKEN_ADDRESS : b.token, native, account: b.account, chainId: b.chainId, balance: b.balance, ...(native ? { decimals: 18 } : args.decimals !== undefined ? { decimals: args.decimals } : {}) })
      } catch (err) {
        return readFailed(err, 'the balance', `${READ_SAYS_NOTHING_SENT} Try again later.`)
      }
    },
  )

  server.registerTool(
    'countersign_tx_status',
    {
      title: 'Transaction status',
      description: 'Whether a transaction is mined, and its receipt (status success or reverted, block, gas used). "pending" means no receipt yet: not mined, or unknown to the node.',
      inputSchema: { txHash, chainId: chainId.describe('Chain to look on. Default: every chain the service has an RPC endpoint for.') },
      outputSchema: txStatusOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async (args) => {
      try {
        const s = await ctx.client.txStatus(args.txHash, args.chainId !== undefined ? { chainId: args.chainId } : {})
        if (s.state === 'pending') return ok(`Transaction ${args.txHash}: pending (no receipt yet; not mined, or unknown).`, { txHash: args.txHash, state: 'pending' })
        const r = s.receipt
        const text = `Transaction ${r.txHash}: ${r.status} in block ${r.blockNumber}${r.chainId !== undefined ? ` on chain ${r.chainId}` : ''}, gas used ${r.gasUsed}.`
        return ok(text, { txHash: r.txHash, state: 'mined', status: r.status, blockNumber: r.blockNumber, gasUsed: r.gasUsed, ...(r.chainId !== undefined ? { chainId: r.chainId } : {}), ...(r.from ? { from: r.from } : {}), ...(r.to !== undefined ? { to: r.to } : {}) })
      } catch (err) {
        return readFailed(err, `the status of transaction ${args.txHash}`, `It may be mined or pending. ${READ_SAYS_NOTHING_SENT} Check again later.`)
      }
    },
  )

  // After a send whose outcome is unknown, the model has only the intent id: this finds its transaction.
  server.registerTool(
    'countersign_intent_status',
    {
      title: 'What was sent for an intent',
      description:
        'Whether countersign signed and sent a transaction for an intent id (as named by a send tool\'s result, e.g. after "OUTCOME UNKNOWN"), and if so its hash and whether it is mined (a found transaction whose receipt cannot be read now is reported as sent, state unknown). "Not found" means nothing was signed for it: not sent yet, refused, or still being signed.',
      inputSchema: { intentId: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'an intent id: a UUID in lower case, as a send tool gives it').describe('The intent id (a UUID in lower case) from a send tool\'s result.') },
      outputSchema: intentStatusOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async (args) => {
      let sent
      try {
        sent = await ctx.client.findSent(args.intentId)
      } catch (err) {
        return readFailed(err, `what was signed for intent ${args.intentId}`, 'This says nothing about whether it was signed or sent: do not send this payment again as a new request; ask again in a minute.')
      }
      if (!sent) {
        const text = `No transaction was signed for intent ${args.intentId}: it was not sent yet, was refused, or is still being signed (check again in a minute).`
        return ok(text, { intentId: args.intentId, found: false })
      }
      const signed = { intentId: args.intentId, found: true, txHash: sent.txHash, broadcast: sent.broadcast }
      let s
      try {
        s = await ctx.client.txStatus(sent.txHash, { chainId: sent.chainId })
      } catch (err) {
        // The transaction exists whatever the node says now: that is the answer, its state is what is missing.
        const why = err instanceof CountersignError ? `${word(err.code)}, HTTP ${err.status}` : 'client error'
        const how = sent.broadcast ? 'was signed and sent' : 'was signed (countersign has no word that the node took it)'
        return ok(
          `Intent ${args.intentId}: transaction ${sent.txHash} ${how}; its receipt could not be read now (${why}), so whether it is mined is not known. Do not send this payment again: check it later with countersign_tx_status or countersign_intent_status.`,
          { ...signed, receiptError: err instanceof CountersignError ? err.code : 'client_error' },
        )
      }
      const mined = s.state === 'mined' ? { status: s.receipt.status, blockNumber: s.receipt.blockNumber } : {}
      const facts = { ...signed, state: s.state, ...mined }
      if (s.state === 'mined') {
        return ok(`Intent ${args.intentId}: transaction ${sent.txHash} was sent and mined: ${s.receipt.status} in block ${s.receipt.blockNumber}. Do not send this payment again.`, facts)
      }
      if (!sent.broadcast) {
        return ok(
          `Intent ${args.intentId}: transaction ${sent.txHash} was signed, but countersign has no word that the node took it (it is being sent, or the node refused it), and it is not mined. Sending the same intent again sends this same transaction; do not send this payment as a new request.`,
          facts,
        )
      }
      return ok(`Intent ${args.intentId}: transaction ${sent.txHash} was sent; not mined yet (pending). Do not send this payment again.`, facts)
    },
  )

  server.registerTool(
    'countersign_pending',
    {
      title: 'Approval requests waiting for an operator',
      description: 'The approval requests now waiting for a human operator on the countersign dashboard: request id, what is asked, risk score, warnings, seconds left. Only an operator can approve; tell the user which request to look at.',
      inputSchema: { wallet: address('Only requests of this wallet. Default: all.').optional() },
      outputSchema: pendingOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      try {
        const { pending } = await ctx.client.pending()
        const mine = args.wallet ? pending.filter((p) => typeof p.summary.wallet === 'string' && p.summary.wallet.toLowerCase() === args.wallet!.toLowerCase()) : pending
        // What is asked names tokens by their on-chain symbols: quoted, so a symbol cannot add lines.
        const lines = mine.map((p) => `- request ${word(p.requestId)} (risk ${p.summary.riskScore}; ${p.ttlSeconds} s left): ${quoted(p.summary.action)}${p.summary.warnings.length ? `; warnings: ${p.summary.warnings.map(quoted).join(', ')}` : ''}`)
        const text = mine.length ? `${mine.length} approval request(s) waiting for an operator; what each asks and its warnings are ${UNTRUSTED}:\n${lines.join('\n')}` : 'No approval request is waiting.'
        return ok(text, {
          pending: mine.map((p) => ({ requestId: p.requestId, action: p.summary.action, riskScore: p.summary.riskScore, warnings: p.summary.warnings, ttlSeconds: p.ttlSeconds, ...(p.summary.intentId ? { intentId: p.summary.intentId } : {}) })),
        })
      } catch (err) {
        return readFailed(err, 'the pending approval requests', `${READ_SAYS_NOTHING_SENT} Try again later.`)
      }
    },
  )
}
