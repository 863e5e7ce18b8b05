import { APPROVAL_REQUEST_TTL_MS, APPROVAL_TOKEN_TTL_MS, intentHash, type Clock, type TxIntent } from '@countersign/shared'
import { simpleErrorBody } from '@countersign/shared/http/errorBodies'
import { HttpError } from '@countersign/shared/http/errors'
import type { IntentReservations } from '../store/intentReservations.js'

/**
 * How long an approval request holds its intent id: the request waits up to
 * 300 s, and a decision made at its last moment is kept, with the token it
 * grants, for 300 s more. Counted from each time the approver is asked.
 */
export const INTENT_RESERVATION_MS = APPROVAL_REQUEST_TTL_MS + APPROVAL_TOKEN_TTL_MS

/** An intent id held by an approval request, for the one intent (its intentHash) that request is about. */
export interface ReservedIntents {
  /** 409 intent_conflict when an approval request holds intent.id for another intent. */
  refuseAnotherBody(intent: TxIntent): void
  /** Holds intent.id for this intent before the approver is asked about it; 409 intent_conflict when another intent holds it. */
  holdForApproval(intent: TxIntent): void
}

const heldElsewhere = (intent: TxIntent) =>
  new HttpError(
    409,
    simpleErrorBody(
      'intent_conflict',
      `intent ${intent.id} is held by an approval request for a different body (until that request and the token it may grant expire); send that intent, or a new intent with a new id`,
    ),
  )

/**
 * build, approve-request and sign-and-send refuse an intent whose id an
 * approval request holds for another body. Before, a 0-amount intent under
 * the id of a waiting request (read from the pending list) was signed without
 * approval, and the approved intent then met 409 at sign-and-send for ever.
 */
export function createReservedIntents(reservations: IntentReservations, clock: Clock): ReservedIntents {
  return {
    refuseAnotherBody(intent) {
      if (reservations.heldForAnother(intent.id, () => intentHash(intent), clock())) throw heldElsewhere(intent)
    },
    holdForApproval(intent) {
      const now = clock()
      if (!reservations.reserve(intent.id, intentHash(intent), now, now + INTENT_RESERVATION_MS)) throw heldElsewhere(intent)
    },
  }
}
