import { erc20Abi, type Address } from 'viem'
import {
  NATIVE_TOKEN_ADDRESS,
  contractOf,
  specOf,
  VALUE_RECEIVING_ROLES,
  type BalanceDiff,
  type BuiltTx,
  type PolicyConfig,
  type PreflightFindings,
  type RiskFactor,
  type RouterTable,
  type TokenFact,
  type TxIntent,
} from '@countersign/shared'
import { mismatchOf, describeMismatch, escapeForDisplay } from '@countersign/shared/server'
import type { ChainClient } from '../chain/chainClients.js'
import { estimateFees, gasLimitFor } from '../chain/fees.js'
import type { L1FeeReader } from '../chain/l1Fee.js'
import type { SimulationFacts } from './recentPreflights.js'
import type { ChainFacts } from './chainFacts.js'
import { scoreRisk } from './riskScore.js'
import { findLookalike, type Signal } from './signals.js'
import { simulateTx, type Simulation } from './simulate.js'
import { lookalikeTokens, wellKnownSymbol } from './wellKnownTokens.js'

export interface PreflightReport {
  intentId: string
  simulationSuccess: boolean
  riskScore: number
  gasEstimate: string
  warnings: string[]
  balanceDiffs: BalanceDiff[]
  riskReasons: string[]
  riskFactors: RiskFactor[]
  signals: Signal[]
  revertReason: string | null
  allowanceChanges: Array<{ token: string; spender: string; before: string; after: string }>
  simulationMethod: Simulation['method']
  /** The estimated gas cost against constraints.maxGasWei; null when there was no estimate or no fee data. */
  gasCost: GasCost | null
  /** The chain's symbol() and decimals() of the intent's tokens that have code (kept for sign-time risk). */
  tokenFacts: TokenFact[]
  /** Tokens claiming a well-known symbol of the chain at another address (kept for sign-time risk). */
  tokenLookalikes: string[]
  /** totalSupply() of the tokens the intent approves, by lower-case address, where the chain answered (kept for sign-time risk). */
  tokenSupplies: Readonly<Record<string, bigint>>
}

/** Gas limit (as sign-and-send sets it) times the chain's current max fee, plus an OP-stack chain's L1 data fee, against the intent's ceiling. */
export interface GasCost {
  gas: string
  maxFeePerGas: string
  /**
   * The L1 data fee the chain's GasPriceOracle asks for this transaction; "0"
   * on chains without one; null when the oracle could not be read (then the
   * cost is gas × max fee alone, a lower bound, and sign-and-send reads it again).
   */
  l1FeeWei: string | null
  costWei: string
  maxGasWei: string
  withinLimit: boolean
}

export interface PreflightDeps {
  policy: PolicyConfig
  routers: RouterTable
  facts: ChainFacts
  l1Fee: L1FeeReader
  /** Addresses this wallet sent to or approved before on this chain. */
  knownRecipients(chainId: number, wallet: string): string[]
}

const NATIVE = NATIVE_TOKEN_ADDRESS.toLowerCase()

/**
 * Simulation, balance diffs, the risk score and the warnings, with the
 * independent chain reads in parallel. Throws only when the node fails
 * (the route answers 502 rpc_error); a reverting transaction is a result.
 */
export async function runPreflight(intent: TxIntent, built: BuiltTx, chain: ChainClient, deps: PreflightDeps): Promise<PreflightReport> {
  const { client, chainId } = chain
  const spec = specOf(intent.action)
  const wallet = intent.wallet.address.toLowerCase()
  const tx = built.txRequest
  const assets = spec.tokens(intent.action)
  // Allowances the action grants: is each spender a contract, and what may it spend today?
  const allowances = spec.flows(intent.action).filter((f) => f.kind === 'allowance' && f.asset !== null && f.spender !== undefined)

  const [sim, fees, l1Fee, tokenFacts, spenderHasCode, allowanceBefore, supplies] = await Promise.all([
    simulateTx(client, { from: intent.wallet.address, to: tx.to, data: tx.data, value: BigInt(tx.value) }),
    estimateFees(client, intent.preferences?.speed).catch(() => null),
    deps.l1Fee(chain, tx).catch(() => null),
    Promise.all(assets.map((t) => deps.facts.token(client, chainId, t.address))),
    Promise.all(allowances.map((f) => deps.facts.hasCode(client, chainId, f.spender!))),
    Promise.all(
      allowances.map((f) =>
        client.readContract({ address: f.asset!.address, abi: erc20Abi, functionName: 'allowance', args: [intent.wallet.address, f.spender!] }).catch(() => null),
      ),
    ),
    Promise.all(allowances.map((f) => client.readContract({ address: f.asset!.address, abi: erc20Abi, functionName: 'totalSupply' }).catch(() => null))),
  ])
  const tokenSupplies: Record<string, bigint> = {}
  allowances.forEach((f, n) => {
    const supply = supplies[n]
    if (typeof supply === 'bigint') tokenSupplies[f.asset!.address.toLowerCase()] = supply
  })

  const signals: Signal[] = []
  const tokenMismatches: string[] = []
  let success = sim.success
  let revertReason = sim.revertReason
  assets.forEach((t, n) => {
    const f = tokenFacts[n]!
    if (!f.hasCode) {
      // A call to an address without code "succeeds" and moves nothing; say what it is.
      success = false
      revertReason ??= `token ${t.address} has no contract code on chain ${chainId}`
      signals.push({ id: 'token_not_contract', message: `token ${t.address} has no contract code on chain ${chainId}; nothing would be transferred` })
      return
    }
    const m = mismatchOf(t, { address: t.address, symbol: f.symbol, decimals: f.decimals })
    if (m) {
      if (m.declared.symbol !== undefined && m.declared.symbol !== m.onChain.symbol) {
        signals.push({ id: 'declared_symbol_mismatch', message: `token ${t.address} is ${m.onChain.symbol === null ? 'without a symbol' : escapeForDisplay(m.onChain.symbol)} on chain, but the intent says ${escapeForDisplay(m.declared.symbol)}` })
      }
      if (m.declared.decimals !== undefined && m.declared.decimals !== m.onChain.decimals) {
        signals.push({ id: 'declared_decimals_mismatch', message: `token ${t.address} has ${m.onChain.decimals ?? 'unknown'} decimals on chain, but the intent says ${m.declared.decimals}${m.onChain.decimals !== null ? `: amounts shown may be off by 10^${Math.abs(m.onChain.decimals - m.declared.decimals)}` : ''}` })
      }
      tokenMismatches.push(escapeForDisplay(describeMismatch(m)))
    }
  })
  allowances.forEach((f, n) => {
    if (!spenderHasCode[n]) {
      signals.push({ id: 'spender_not_contract', message: `spender ${f.spender} has no contract code: an approval to a plain account is unusual and often a scam` })
    }
  })
  const known = deps.knownRecipients(chainId, wallet)
  for (const { address: counterparty } of spec.counterparties(intent).filter((c) => VALUE_RECEIVING_ROLES.includes(c.role))) {
    const lookalike = findLookalike(counterparty, known)
    if (lookalike) {
      signals.push({ id: 'lookalike_recipient', message: `${counterparty} looks like ${lookalike}, which this wallet used before (same first and last 4 hex characters) but is a different address` })
    }
    if (!known.some((k) => k.toLowerCase() === counterparty.toLowerCase())) {
      signals.push({ id: 'first_time_recipient', message: `this wallet has not sent to ${counterparty} before` })
    }
  }

  const reported = assets.flatMap((t, n) => (tokenFacts[n]!.hasCode ? [{ address: t.address, symbol: tokenFacts[n]!.symbol }] : []))
  const tokenLookalikes = await lookalikesOf(reported, chain, deps)

  const balanceDiffs = success ? balanceDiffsOf(sim, wallet, intent) : []
  const { riskScore, riskFactors } = scoreRisk({
    intent,
    policy: deps.policy,
    contract: contractOf(intent, deps.routers),
    simulationSuccess: success,
    gasEstimate: sim.gasUsed,
    tokenMismatches,
    tokenLookalikes,
    balanceDiffs: success ? balanceDiffs : null,
    tokensWithoutDecimals: assets.flatMap((t, n) => (tokenFacts[n]!.hasCode && tokenFacts[n]!.decimals === null ? [t.address] : [])),
    tokenSupplies,
  })

  // Found by review: an L1 fee that could not be read took the whole gas check away; the known part is still checked.
  const gasCost = sim.gasUsed !== null && fees ? gasCostOf(sim.gasUsed, fees.maxFeePerGas, tx.data !== '0x', intent.constraints.maxGasWei, l1Fee) : null
  if (gasCost && !gasCost.withinLimit) signals.push({ id: 'gas_cost_exceeds_max', message: gasCostExceededText(gasCost) })
  if (gasCost && gasCost.l1FeeWei === null) {
    signals.push({ id: 'l1_fee_unknown', message: `the L1 data fee chain ${chainId} also takes could not be read: the gas cost shown is gas × max fee alone` })
  }

  const allowanceChanges = allowances.flatMap((f, n) => {
    const before = allowanceBefore[n]
    if (before === null || before === undefined) return []
    return [{ token: f.asset!.address, spender: f.spender!, before: before.toString(), after: success ? f.amount.toString() : before.toString() }]
  })

  return {
    intentId: intent.id,
    simulationSuccess: success,
    riskScore,
    gasEstimate: (sim.gasUsed ?? 0n).toString(),
    warnings: [...(revertReason ? [`simulation reverted: ${revertReason}`] : []), ...signals.map((s) => s.message)],
    balanceDiffs,
    riskReasons: riskFactors.map((f) => f.detail),
    riskFactors,
    signals,
    revertReason,
    allowanceChanges,
    simulationMethod: sim.method,
    gasCost,
    tokenFacts: assets.flatMap((t, n) => (tokenFacts[n]!.hasCode ? [{ address: t.address, symbol: tokenFacts[n]!.symbol, decimals: tokenFacts[n]!.decimals }] : [])),
    tokenLookalikes,
    tokenSupplies,
  }
}

/**
 * Tokens that report a well-known symbol of the chain at another address.
 * The configured v3 router's WETH9 counts as the real WETH: on the public
 * chains it is the listed one, on the dev chain (Base's chain id, Uniswap
 * deployed at other addresses) it is the fixture's, which is not a lookalike
 * there. Asked only when a token says "WETH" (one cached call per chain).
 */
async function lookalikesOf(tokens: Array<{ address: Address; symbol: string | null }>, chain: ChainClient, deps: PreflightDeps): Promise<string[]> {
  const router = deps.routers.v3[chain.chainId]
  const saysWeth = tokens.some((t) => wellKnownSymbol(chain.chainId, t.symbol) === 'WETH')
  const weth = saysWeth && router ? await deps.facts.routerWeth(chain.client, chain.chainId, router) : null
  return lookalikeTokens(chain.chainId, tokens, { WETH: weth })
}

/** `l1FeeWei` null: the chain's L1 fee could not be read; the cost is then the gas part alone. */
export function gasCostOf(gasUsed: bigint, maxFeePerGas: bigint, hasCalldata: boolean, maxGasWei: string, l1FeeWei: bigint | null = 0n): GasCost {
  const gas = gasLimitFor(gasUsed, hasCalldata)
  const cost = gas * maxFeePerGas + (l1FeeWei ?? 0n)
  return { gas: gas.toString(), maxFeePerGas: maxFeePerGas.toString(), l1FeeWei: l1FeeWei === null ? null : l1FeeWei.toString(), costWei: cost.toString(), maxGasWei, withinLimit: cost <= BigInt(maxGasWei) }
}

/** Names both numbers: what the transaction would cost at today's fees, and the intent's ceiling. */
export function gasCostExceededText(g: GasCost): string {
  return `estimated gas cost ${g.costWei} wei (${costParts(g.gas, g.maxFeePerGas, g.l1FeeWei ?? 0n)}${g.l1FeeWei === null ? ', the L1 data fee unread' : ''}) exceeds constraints.maxGasWei ${g.maxGasWei} wei`
}

/** What a gas cost is made of, as the refusals word it. */
export function costParts(gas: bigint | string, maxFeePerGas: bigint | string, l1FeeWei: bigint | string): string {
  return `gas ${gas} at max fee ${maxFeePerGas} wei${BigInt(l1FeeWei) > 0n ? `, plus an L1 data fee of ${l1FeeWei} wei` : ''}`
}

/** The preflight_completed audit event's data. */
export function preflightAuditData(r: PreflightReport): Record<string, unknown> {
  return {
    simulationSuccess: r.simulationSuccess,
    riskScore: r.riskScore,
    gasEstimate: r.gasEstimate,
    simulationMethod: r.simulationMethod,
    ...(r.gasCost ? { gasCostWei: r.gasCost.costWei } : {}),
  }
}

/** What sign-and-send needs from a preflight to score risk again (recentPreflights). */
export function simulationFactsOf(r: PreflightReport): SimulationFacts {
  return { simulationSuccess: r.simulationSuccess, gasEstimate: BigInt(r.gasEstimate), tokens: r.tokenFacts, lookalikes: r.tokenLookalikes, balanceDiffs: r.simulationSuccess ? r.balanceDiffs : null, tokenSupplies: r.tokenSupplies }
}

/** Net movement per asset for the wallet, from the simulation's traced transfers. */
export function balanceDiffsOf(sim: Simulation, wallet: string, intent: TxIntent): BalanceDiff[] {
  const net = new Map<string, bigint>()
  const add = (token: string, v: bigint) => net.set(token, (net.get(token) ?? 0n) + v)
  if (sim.method === 'eth_call') {
    // No tracing on this node: the movements the intent itself declares.
    for (const f of specOf(intent.action).flows(intent.action)) {
      if (f.kind === 'outflow' && f.bound === 'exact') add(f.asset ? f.asset.address.toLowerCase() : NATIVE, -f.amount)
    }
  }
  for (const t of sim.transfers) {
    if (t.from === wallet) add(t.token, -t.value)
    if (t.to === wallet) add(t.token, t.value)
  }
  return [...net.entries()]
    .filter(([, v]) => v !== 0n)
    .map(([token, change]) => ({ token: token === NATIVE ? NATIVE_TOKEN_ADDRESS : (token as Address), change: change.toString() }))
}

/** Preflight findings as the approver receives them. */
export function findingsOf(r: PreflightReport): PreflightFindings {
  return {
    riskScore: r.riskScore,
    riskFactors: r.riskFactors,
    warnings: r.warnings,
    balanceDiffs: r.balanceDiffs,
    gasEstimate: r.gasEstimate,
    simulationSuccess: r.simulationSuccess,
  }
}
