// What the client checks of a 2xx body before handing it on: the fields it
// and approveAndSend read themselves, with their types. Not the whole schema
// (the service's OpenAPI document has that); enough that a proxy's page or a
// truncated answer is an UnexpectedResponseError naming what was wrong, not
// a TypeError somewhere in the caller.

/** Why `v` is not such an answer, or null. */
export type ShapeCheck = (v: unknown) => string | null

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const HASH = /^0x[0-9a-fA-F]{64}$/

/** Fields (name → check) of an object answer; the first that fails is named. */
function fields(spec: Record<string, (x: unknown) => boolean>, optional: Record<string, (x: unknown) => boolean> = {}): ShapeCheck {
  return (v) => {
    if (!isObject(v)) return `expected a JSON object, got ${v === undefined ? 'an empty body' : Array.isArray(v) ? 'an array' : typeof v}`
    for (const [name, ok] of Object.entries(spec)) if (!ok(v[name])) return `${name} is missing or of another type`
    for (const [name, ok] of Object.entries(optional)) if (v[name] !== undefined && !ok(v[name])) return `${name} is of another type`
    return null
  }
}

const str = (x: unknown) => typeof x === 'string'
const bool = (x: unknown) => typeof x === 'boolean'
const num = (x: unknown) => typeof x === 'number' && Number.isFinite(x)
const hash = (x: unknown) => typeof x === 'string' && HASH.test(x)
const digits = (x: unknown) => typeof x === 'string' && /^[0-9]+$/.test(x)
const strings = (x: unknown) => Array.isArray(x) && x.every(str)

export const anyObject: ShapeCheck = fields({})
export const anyArray: ShapeCheck = (v) => (Array.isArray(v) ? null : 'expected a JSON array')

export const approvalShape = fields({ intentId: str, approved: bool, description: str, riskScore: num, warnings: strings }, { approvalTokenId: str, approvalRequired: bool })

export const signAndSendShape = fields({ intentId: str, broadcast: bool, txHash: hash })

export const intentTxShape = fields({ intentId: str, txHash: hash, broadcast: bool, chainId: num })

export const receiptShape = fields({ txHash: hash, status: (x) => x === 'success' || x === 'reverted', blockNumber: (x) => Number.isSafeInteger(x), gasUsed: digits, chainId: num })

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const address = (x: unknown) => typeof x === 'string' && ADDRESS.test(x)
const signedDigits = (x: unknown) => typeof x === 'string' && /^-?[0-9]+$/.test(x)

export const balanceShape = fields({ token: address, account: address, balance: digits, chainId: (x) => Number.isSafeInteger(x) })

const balanceDiff = fields({ token: address, change: signedDigits })

export const preflightShape = fields(
  {
    intentId: str,
    simulationSuccess: bool,
    riskScore: (x) => num(x) && (x as number) >= 0 && (x as number) <= 100,
    gasEstimate: digits,
    warnings: strings,
    balanceDiffs: (x) => Array.isArray(x) && x.every((d) => balanceDiff(d) === null),
  },
  { revertReason: (x) => x === null || str(x), riskReasons: strings },
)

const quorum = fields({ required: num, approvals: num, approvedBy: strings, remaining: num })

export const decideShape = fields({ decided: bool, requestId: str, approved: bool }, { operator: str, quorum: (x) => quorum(x) === null, counted: bool })

export const pendingListShape: ShapeCheck = (v) => {
  const base = fields({ pending: Array.isArray })(v)
  if (base) return base
  const bad = (v as { pending: unknown[] }).pending.findIndex((p) => !isObject(p) || !isObject(p.summary) || typeof p.summary.intentId !== 'string' || typeof p.requestId !== 'string')
  return bad === -1 ? null : `pending/${bad} is not a pending request (requestId, summary.intentId)`
}
