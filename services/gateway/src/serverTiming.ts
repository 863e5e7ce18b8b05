// Where a request's time went, as a W3C Server-Timing response header
// ("build;dur=0.18, preflight;dur=1.51, …, total;dur=8.16"): the per-phase
// timers issue 17 asks for, left in the product so that anyone can read the
// gateway's phases with curl -i or a browser's network panel, and
// `npm run bench` prints them every run. Off unless SERVICE_SERVER_TIMING=on:
// durations tell a caller how long the operator, the signer or the node took,
// which a public deployment need not hand out.
import type { FastifyInstance } from 'fastify'

export interface PhaseTimer {
  /** Ends the phase that started at the previous mark (or the request's start) and names it. */
  mark(phase: string): void
  /** The Server-Timing value: every marked phase in order, then the total so far. */
  header(): string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** This request's phase timer; null unless SERVICE_SERVER_TIMING=on. */
    phases: PhaseTimer | null
  }
}

/** Server-Timing metric names are HTTP tokens; ours are fixed words, checked so that a typo cannot break the header. */
const TOKEN = /^[a-z][a-z0-9-]*$/

export function startPhaseTimer(now: () => number = () => performance.now()): PhaseTimer {
  const start = now()
  let last = start
  const phases: string[] = []
  return {
    mark(phase) {
      if (!TOKEN.test(phase)) throw new RangeError(`Server-Timing phase names are lower-case tokens, got "${phase}"`)
      const t = now()
      phases.push(`${phase};dur=${(t - last).toFixed(2)}`)
      last = t
    },
    header() {
      return [...phases, `total;dur=${(now() - start).toFixed(2)}`].join(', ')
    },
  }
}

/** Gives every request `req.phases` (null when off) and, when on, a Server-Timing header on every response. */
export function installServerTiming(app: FastifyInstance, enabled: boolean): void {
  app.decorateRequest('phases', null)
  if (!enabled) return
  app.addHook('onRequest', (req, _reply, done) => {
    req.phases = startPhaseTimer()
    done()
  })
  app.addHook('onSend', (req, reply, payload, done) => {
    if (req.phases) reply.header('server-timing', req.phases.header())
    done(null, payload)
  })
}
