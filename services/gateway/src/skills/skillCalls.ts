// The skill runner's approve-requests. Each intent a skill submits goes
// through the gateway's own route (app.inject), marked with a secret only
// this process knows and with a fresh id for that one call. The route finds
// the call here: the secret is what lets a card say "skill", and the id is
// the owner of the approval request the call creates, so that a run that
// stops withdraws what it asked for itself and nothing else. Intent ids are
// public (the pending list, the history) and a skill chooses its own, so an
// intent id never decides what a run may withdraw.
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

/** Carries the runner's secret: a client cannot know its value. */
export const SKILL_RUN_HEADER = 'x-countersign-skill-run'
/** Carries the call's id; trusted only next to the secret. */
export const SKILL_CALL_HEADER = 'x-countersign-skill-call'

export interface SkillCall {
  /** Fresh for each call: requestApproval's and withdrawApproval's `owner`. */
  owner: string
  /** Aborts when the run is gone (its process exited or was killed). */
  stopped: AbortSignal
}

export interface SkillCalls {
  /** Starts one call: the headers its approve-request carries; `end` once it has been answered. */
  begin(stopped: AbortSignal): { headers: Record<string, string>; end(): void }
  /** The runner's call a request belongs to; null for any other client's request. */
  of(headers: IncomingHttpHeaders): SkillCall | null
}

export function createSkillCalls(): SkillCalls {
  const secret = Buffer.from(randomBytes(32).toString('hex'))
  const live = new Map<string, AbortSignal>()
  // Compared as bytes of equal length: a header of another length, or with bytes beyond ASCII, is simply not the secret.
  const fromRunner = (value: unknown): boolean => {
    if (typeof value !== 'string') return false
    const given = Buffer.from(value)
    return given.length === secret.length && timingSafeEqual(given, secret)
  }
  return {
    begin(stopped) {
      const owner = randomUUID()
      live.set(owner, stopped)
      return { headers: { [SKILL_RUN_HEADER]: secret.toString(), [SKILL_CALL_HEADER]: owner }, end: () => void live.delete(owner) }
    },
    of(headers) {
      if (!fromRunner(headers[SKILL_RUN_HEADER])) return null
      const owner = headers[SKILL_CALL_HEADER]
      if (typeof owner !== 'string') return null
      const stopped = live.get(owner)
      return stopped ? { owner, stopped } : null
    },
  }
}
