// The action registry: one spec per action type (DESIGN.md §6 "one module
// per action"). A new action type is its wire type in ../types.ts, its module
// here and one line in ACTION_SPECS; the mapped type below makes a missing
// entry a compile error, and ActionSpec makes a missing member one.
import type { SwapRoute } from '../builders/swap.js'
import type { Action, ActionType, TxIntent } from '../types.js'
import { approveSpec } from './approve.js'
import type { ActionSpec } from './spec.js'
import { swapExactInSpec } from './swapExactIn.js'
import { swapExactOutSpec } from './swapExactOut.js'
import { transferSpec } from './transfer.js'
import { transferNativeSpec } from './transferNative.js'

export * from './spec.js'
export { UNLIMITED_APPROVAL, isUnlimitedApproval } from './approve.js'
export { PROVIDER_ALIASES, canonicalProvider, withCanonicalProvider } from './providers.js'

export type ActionSpecs = { readonly [T in ActionType]: ActionSpec<Extract<Action, { type: T }>> }

export const ACTION_SPECS: ActionSpecs = {
  transfer: transferSpec,
  transfer_native: transferNativeSpec,
  approve: approveSpec,
  swap_exact_in: swapExactInSpec,
  swap_exact_out: swapExactOutSpec,
}

/** Every action type, in the registry's order (schemas, manifests, docs). */
export const ACTION_TYPES = Object.keys(ACTION_SPECS) as ActionType[]

/**
 * The spec of an action, typed for that action. The cast is the one place
 * the union is narrowed by its tag: ACTION_SPECS[a.type] is the spec of
 * exactly a's type by construction of ActionSpecs.
 */
export function specOf<A extends Action>(action: A): ActionSpec<A> {
  return ACTION_SPECS[action.type as ActionType] as unknown as ActionSpec<A>
}

/** The plain-words description of an intent (symbols and decimals are the intent's declared ones). */
export function describeIntent(intent: TxIntent, route?: SwapRoute): string {
  return specOf(intent.action).describe(intent, route)
}
