import { describe, expect, it } from 'vitest'
import { defaultPolicyConfig } from '../policy/defaults.js'
import { evaluatePolicy } from '../policy/evaluatePolicy.js'
import { defaultRouterTable } from '../builders/routers.js'
import { buildTransaction } from '../builders/buildTransaction.js'
import { normalizeIntentAddresses, toChecksumAddress } from '../builders/addresses.js'
import { txIntentSchema } from '../schemas/txIntent.js'
import { skillManifestSchema } from '../schemas/skillManifest.js'
import { actions, makeIntent, RECIPIENT, ROUTER_BASE, USDC_BASE, WALLET, WETH_BASE } from '../server/testing/intents.js'
import type { Action, ActionType, Address, PolicyConfig, TxIntent } from '../types.js'
import { ACTION_SPECS, ACTION_TYPES, specOf, VALUE_RECEIVING_ROLES, type CounterpartyRole, type TokenFlow } from './index.js'

const NOW = Date.UTC(2026, 10, 22, 12)
const routers = defaultRouterTable()
const cfg = (o: Partial<PolicyConfig> = {}): PolicyConfig => ({ ...defaultPolicyConfig(), ...o })
const intentOf = (action: Action): TxIntent => makeIntent({ nowMs: NOW, action })
const lower = (a: string) => a.toLowerCase()

interface Row {
  action: Action
  contract: Address | null
  counterparties: Array<[CounterpartyRole, Address]>
  tokens: Address[]
  flows: Array<Pick<TokenFlow, 'kind' | 'amount' | 'bound'> & { token: Address | null }>
  /** Tokens taken in exchange (a swap's assetOut). */
  acquires: Address[]
}

// One row per action type. The Record type makes a new action type without
// a row a compile error; the test below makes it a failure too.
const rows: Record<ActionType, Row> = {
  transfer: {
    action: actions.transfer('5000000'),
    contract: USDC_BASE,
    counterparties: [['recipient', RECIPIENT]],
    tokens: [USDC_BASE],
    flows: [{ kind: 'outflow', token: USDC_BASE, amount: 5000000n, bound: 'exact' }],
    acquires: [],
  },
  transfer_native: {
    action: actions.native('7'),
    contract: null,
    counterparties: [['recipient', RECIPIENT]],
    tokens: [],
    flows: [{ kind: 'outflow', token: null, amount: 7n, bound: 'exact' }],
    acquires: [],
  },
  approve: {
    action: actions.approve('1000000'),
    contract: USDC_BASE,
    counterparties: [['spender', ROUTER_BASE]],
    tokens: [USDC_BASE],
    flows: [{ kind: 'allowance', token: USDC_BASE, amount: 1000000n, bound: 'at_most' }],
    acquires: [],
  },
  swap_exact_in: {
    action: actions.swapIn(),
    contract: ROUTER_BASE,
    counterparties: [
      ['router', ROUTER_BASE],
      ['swap_receiver', WALLET],
    ],
    tokens: [USDC_BASE, WETH_BASE],
    flows: [{ kind: 'outflow', token: USDC_BASE, amount: 1000000n, bound: 'exact' }],
    acquires: [WETH_BASE],
  },
  swap_exact_out: {
    action: actions.swapOut(),
    contract: ROUTER_BASE,
    counterparties: [
      ['router', ROUTER_BASE],
      ['swap_receiver', WALLET],
    ],
    tokens: [USDC_BASE, WETH_BASE],
    flows: [{ kind: 'outflow', token: USDC_BASE, amount: 5000000n, bound: 'at_most' }],
    acquires: [WETH_BASE],
  },
}
const table = ACTION_TYPES.map((type) => [type, rows[type]] as const)

describe('the action registry', () => {
  it('has one spec per action type, each under its own type, and a row here for each', () => {
    expect(Object.keys(rows).sort()).toEqual([...ACTION_TYPES].sort())
    for (const type of ACTION_TYPES) {
      expect(ACTION_SPECS[type].type).toBe(type)
      expect(ACTION_SPECS[type].schema.properties.type.const).toBe(type)
      expect(ACTION_SPECS[type].summary.length).toBeGreaterThan(10)
    }
  })

  it('the intent schema and the skill manifest list exactly the registry actions', () => {
    expect(txIntentSchema.properties.action.oneOf.map((s) => s.properties.type.const)).toEqual(ACTION_TYPES)
    expect([...skillManifestSchema.properties.permissions.properties.actions.items.enum]).toEqual(ACTION_TYPES)
  })
})

describe.each(table)('%s spec', (type, row) => {
  const intent = intentOf(row.action)
  const spec = specOf(intent.action)

  it('names its contract, counterparties, tokens and flows', () => {
    expect(spec.type).toBe(type)
    expect(spec.contract(intent, routers)).toBe(row.contract)
    expect(spec.counterparties(intent).map((c) => [c.role, c.address])).toEqual(row.counterparties)
    expect(spec.tokens(intent.action).map((t) => t.address)).toEqual(row.tokens)
    expect(spec.flows(intent.action).map((f) => ({ kind: f.kind, token: f.asset?.address ?? null, amount: f.amount, bound: f.bound }))).toEqual(row.flows)
    expect(spec.acquires(intent.action).map((t) => t.address)).toEqual(row.acquires)
  })

  it('builds a transaction to its contract (or its recipient), described with every counterparty in full', () => {
    const built = buildTransaction(intent, routers)
    expect(built.txRequest.to).toBe(row.contract ?? row.counterparties[0]![1])
    for (const [role, address] of row.counterparties) if (VALUE_RECEIVING_ROLES.includes(role)) expect(built.description).toContain(address)
    const card = spec.card(intent, { to: built.txRequest.to })
    for (const [role, address] of row.counterparties) if (VALUE_RECEIVING_ROLES.includes(role)) expect(card.map((f) => f.value)).toContain(address)
    expect(card.filter((f) => f.kind === 'amount').length).toBeGreaterThan(0)
    // A token's symbol is its own claim (any contract can say "WETH"): the card names every token by address too.
    for (const token of row.tokens) expect(card.filter((f) => f.kind === 'address').map((f) => f.value)).toContain(token)
  })

  it('lists every address it carries, and normalises all of them', () => {
    const fields = spec.addresses(intent.action).map(([, a]) => lower(a))
    for (const [, address] of row.counterparties.filter(([r]) => r !== 'swap_receiver')) expect(fields).toContain(lower(address))
    for (const token of row.tokens) expect(fields).toContain(lower(token))
    const upper = (a: Address) => `0x${a.slice(2).toUpperCase()}` as Address
    const shouted = { ...intent, action: spec.mapAddresses(intent.action, upper) }
    const normal = normalizeIntentAddresses(shouted)
    for (const [, a] of spec.addresses(normal.action)) expect(a).toBe(toChecksumAddress(a))
  })

  it('policy: recipientAllowlist covers every counterparty that can receive value', () => {
    const receivers = row.counterparties.filter(([role]) => VALUE_RECEIVING_ROLES.includes(role))
    const other = cfg({ recipientAllowlist: ['0x9999999999999999999999999999999999999999'] })
    const d = evaluatePolicy(other, intent, { nowMs: NOW, recentTxCount: 0, contract: row.contract })
    expect(d.reasonCodes.filter((c) => c === 'recipient_not_in_allowlist')).toHaveLength(receivers.length)
    for (const [, address] of receivers) expect(d.reasons.join('\n')).toContain(address)
    const listed = cfg({ recipientAllowlist: receivers.map(([, a]) => lower(a) as Address) })
    expect(evaluatePolicy(listed, intent, { nowMs: NOW, recentTxCount: 0, contract: row.contract }).reasonCodes).not.toContain('recipient_not_in_allowlist')
  })

  it('policy: every flow counts against its limit (native cap, or the token maxAmount and approval threshold)', () => {
    for (const flow of row.flows) {
      const below = (flow.amount - 1n).toString()
      const tight: Partial<PolicyConfig> =
        flow.token === null ? { maxValueWei: below } : { tokenLimits: { [lower(flow.token)]: { maxAmount: below } } }
      const denied = evaluatePolicy(cfg(tight), intent, { nowMs: NOW, recentTxCount: 0, contract: row.contract })
      expect(denied.decision).toBe('deny')
      expect(denied.reasons.join('\n')).toContain(`${flow.amount}`)
      const atLimit: Partial<PolicyConfig> =
        flow.token === null ? { maxValueWei: flow.amount.toString() } : { tokenLimits: { [lower(flow.token)]: { maxAmount: flow.amount.toString() } } }
      expect(evaluatePolicy(cfg(atLimit), intent, { nowMs: NOW, recentTxCount: 0, contract: row.contract }).reasonCodes).not.toContain('value_exceeds_max')
      const threshold: Partial<PolicyConfig> =
        flow.token === null ? { requireApprovalAbove: { valueWei: below } } : { tokenLimits: { [lower(flow.token)]: { requireApprovalAbove: below } } }
      const held = evaluatePolicy(cfg(threshold), intent, { nowMs: NOW, recentTxCount: 0, contract: row.contract })
      expect(held.decision).toBe('require_approval')
    }
  })

  it('policy: the token allowlist covers every token it touches', () => {
    for (const token of row.tokens) {
      const others = row.tokens.filter((t) => t !== token)
      const d = evaluatePolicy(cfg({ tokenAllowlist: others.length ? others : ['0x9999999999999999999999999999999999999999'] }), intent, {
        nowMs: NOW,
        recentTxCount: 0,
        contract: row.contract,
      })
      expect(d.reasonCodes).toContain('token_not_in_allowlist')
      expect(d.reasons.join('\n')).toContain(token)
    }
  })
})
