// What one action type means, in one place. Every part of countersign that
// needs to know who an action pays, which token leaves the wallet, which
// contract it calls or how to show it to an operator reads it from the
// action's spec (./index.ts ACTION_SPECS), never from a switch of its own:
// a rule that forgets one action type is how approvals once escaped the
// token limits.
import type { RouterTable } from '../builders/routers.js'
import type { SwapRoute } from '../builders/swap.js'
import type { Action, Address, Asset, Hex, TxIntent } from '../types.js'

/** An intent whose action is known to be of type A. */
export type IntentWith<A extends Action> = TxIntent & { action: A }

/**
 * Who an action deals with. `recipient` and `spender` can receive value from
 * the wallet (recipientAllowlist applies to them); `router` is the contract a
 * swap calls (contractAllowlist); `swap_receiver` is where swap proceeds go,
 * always the wallet itself.
 */
export type CounterpartyRole = 'recipient' | 'spender' | 'router' | 'swap_receiver'

/** The roles that can take value out of the wallet. */
export const VALUE_RECEIVING_ROLES: readonly CounterpartyRole[] = ['recipient', 'spender']

export interface Counterparty {
  role: CounterpartyRole
  address: Address
  /** Where the address is in the intent, for messages ("action.spender"). */
  field: string
}

/**
 * Value the action lets leave the wallet: an outflow (moved now) or an
 * allowance (a spender may move it later). Both count against the token's
 * limits.
 */
export interface TokenFlow {
  kind: 'outflow' | 'allowance'
  /** The ERC-20, or null for the chain's native coin. */
  asset: Asset | null
  amount: bigint
  /** `exact`: this amount leaves; `at_most`: a ceiling (swap_exact_out's maxAmountIn). */
  bound: 'exact' | 'at_most'
  /** Where the amount is in the intent ("action.amount"). */
  field: string
  /** For an allowance: who may spend it. */
  spender?: Address
}

/** One line of the approval card: what the operator reads before deciding. */
export interface CardField {
  label: string
  value: string
  /** `address` values are shown in full, never shortened; `amount` values are formatted with the intent's declared decimals. */
  kind: 'address' | 'amount' | 'text'
}

/** What the card needs of the built transaction. */
export interface CardTx {
  /** The contract (or account) the transaction calls. */
  to: Address
}

/** The JSON Schema of one action: a closed object tagged by its `type`. */
export interface ActionSchema<T extends string> {
  readonly type: 'object'
  readonly additionalProperties: false
  readonly required: readonly string[]
  readonly properties: { readonly type: { readonly const: T } } & Readonly<Record<string, unknown>>
}

export interface BuildOptions {
  routers: RouterTable
  /** Why an aggregator swap fell back to the v3 router (goes into the description). */
  fallbackReason?: string
}

/** The call an action builds: target, calldata and native value. */
export interface ActionCall {
  to: Address
  data: Hex
  value: bigint
  /** Swaps: which router and path were used. */
  route?: SwapRoute
}

/**
 * Everything countersign knows about one action type. Each member is
 * required, so a spec that leaves one out does not compile.
 */
export interface ActionSpec<A extends Action> {
  readonly type: A['type']
  /** One sentence on what the action does (skill manifests, docs). */
  readonly summary: string
  readonly schema: ActionSchema<A['type']>
  /** Whether constraints.maxSlippageBps means anything for it (risk: high_slippage). */
  readonly usesSlippage: boolean
  /** Every address the action carries, with its field. */
  addresses(action: A): Array<[field: string, address: Address]>
  /** The same action with every address passed through `f`. */
  mapAddresses(action: A, f: (address: Address) => Address): A
  /** The transaction, deterministically: the signer rebuilds it with this same function. Throws BuildError. */
  build(intent: IntentWith<A>, opts: BuildOptions): ActionCall
  /** The contract the transaction calls (contractAllowlist); null when it calls none. */
  contract(intent: IntentWith<A>, routers: RouterTable): Address | null
  counterparties(intent: IntentWith<A>): Counterparty[]
  /** Every ERC-20 the action touches (tokenAllowlist, chain facts). */
  tokens(action: A): Asset[]
  /** Every outflow and allowance, with its amount. */
  flows(action: A): TokenFlow[]
  /**
   * Tokens the wallet takes in exchange for an outflow (a swap's assetOut).
   * What it pays goes to whoever sells them (a pool's liquidity providers),
   * so with a recipient allowlist an unvetted one needs an operator.
   */
  acquires(action: A): Asset[]
  /** Plain words for the operator and the client; addresses in full. */
  describe(intent: IntentWith<A>, route?: SwapRoute): string
  /**
   * The action's own lines on the approval card. `tx` is the transaction
   * actually built (an aggregator quote or a fallback may call another
   * contract than the intent names): the card shows what is signed.
   */
  card(intent: IntentWith<A>, tx: CardTx): CardField[]
}
