import { clipText } from '@countersign/shared'
import { escapeForDisplay } from '@countersign/shared/server'

/** Longest chain-supplied text (a revert reason, a node's error message) put into an answer. */
export const MAX_CHAIN_TEXT = 300

/**
 * Text a contract or a node chose (a revert string is whatever the contract
 * reverts with), before it goes into an answer, a warning, an audit event or
 * an operator's card: control and invisible characters escaped, so a newline
 * cannot start what reads as a line of the service's own output, and clipped,
 * so a megabyte of revert data is not repeated everywhere.
 */
export function chainText(text: string, max = MAX_CHAIN_TEXT): string {
  return clipText(escapeForDisplay(text), max)
}
