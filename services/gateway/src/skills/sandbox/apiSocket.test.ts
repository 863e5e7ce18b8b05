// The skill API socket is the one way out of the sandbox, and the code on
// the other end is untrusted (a published skill). Seeded mutations of valid
// intents, odd params and methods, and raw frames go to the real socket
// server; whatever arrives, only an intent that is valid, of an action and
// chain the manifest declared, and stamped with the skill's own name may reach
// the pipeline, unchanged otherwise, and every call gets a refusal in the
// protocol's own terms, never an internal error. FUZZ_SEED / FUZZ_ROUNDS
// replay or lengthen a run.
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { canonicalUuid, createAjv, createRpcClient, SKILL_INTENT_REFUSED, txIntentSchema, type RpcClient, type TxIntent } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { clone, mutate, oddValues } from '@countersign/shared/testing/mutate'
import { seededRandom, type Random } from '@countersign/shared/testing/seededRandom'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { txIntentInputSchema } from '../../routes/intentInput.js'
import type { UnsignedManifest } from '../manifest.js'
import { openSkillApiSocket } from './apiSocket.js'

const SEED = Number(process.env.FUZZ_SEED ?? 20261125)
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 1500)
const SKILL = 'fuzzer'
const permissions = { actions: ['transfer_native', 'transfer'], chains: [8453], network: false, filesystem: false }
const manifest = {
  name: SKILL,
  version: '1.0.0',
  entry: 'index.js',
  files: {},
  permissions,
  sandbox: { memoryMb: 64, timeoutMs: 1000, allowSpawn: false },
} as unknown as UnsignedManifest

/** What reached the pipeline, and what the socket reported as forbidden. */
const submitted: TxIntent[] = []
const forbidden: string[] = []
let runDir: string
let socketPath: string
let closeSocket: () => Promise<void>
let client: RpcClient
/** What may reach the pipeline: the canonical intent (a lower-case id). */
const isIntent = createAjv().compile<TxIntent>(txIntentSchema)
/** What the socket takes, as the HTTP routes do: the id in either case. */
const isIntentInput = createAjv().compile<TxIntent>(txIntentInputSchema)

beforeAll(async () => {
  runDir = mkdtempSync(path.join(os.tmpdir(), 'cs-skillapi-'))
  const opened = await openSkillApiSocket({
    runDir,
    skill: { name: SKILL, manifest },
    // The pipeline's answer is the intent's id: a result can be matched to the intent it came from.
    submit: async (intent) => {
      submitted.push(intent)
      return { status: 200, body: { intentId: intent.id } }
    },
    onForbidden: (reason) => forbidden.push(reason),
  })
  socketPath = opened.socketPath
  closeSocket = opened.close
  client = createRpcClient({ socketPath, timeoutMs: 5000 })
})

afterAll(async () => {
  client?.close()
  await closeSocket?.()
  rmSync(runDir, { recursive: true, force: true })
})

const valid = (): TxIntent[] => [
  makeIntent({ action: actions.native() }),
  makeIntent({ action: actions.transfer() }),
  makeIntent({ action: actions.approve() }),
  makeIntent({ action: actions.swapIn() }),
  makeIntent({ action: actions.swapOut() }),
  makeIntent({ action: actions.native(), chainId: 1 }),
  { ...makeIntent({ action: actions.transfer() }), metadata: { source: 'agent:trusted', note: 'pay the invoice' } },
]

/** The intent as the pipeline must receive it: the sender's, with only metadata.source set to the skill and the id in lower case. */
const stamped = (intent: TxIntent): TxIntent => ({ ...intent, id: canonicalUuid(intent.id), metadata: { ...intent.metadata, source: `skill:${SKILL}` } })

/** A skill's attempts to pass as someone else: every spelling of a source it might hope survives. */
function spoofSource(rng: Random, intent: Record<string, unknown>): Record<string, unknown> {
  const out = clone(intent)
  const source = rng.pick<unknown>(['agent:trusted', `skill:${SKILL}`, 'skill:other', '', 'operator', ...oddValues.slice(0, 12)])
  out.metadata = rng.pick<unknown>([{ source }, { note: 'x', source }, source, null, []])
  return out
}

type Outcome = { kind: 'ok'; result: unknown } | { kind: 'refused'; reason: unknown } | { kind: 'invalid' } | { kind: 'no method' } | { kind: 'other'; text: string }

async function submit(method: string, params: unknown): Promise<Outcome> {
  try {
    return { kind: 'ok', result: await client.call(method, params) }
  } catch (err) {
    const { code, data, message } = err as { code?: unknown; data?: { reason?: unknown }; message?: string }
    if (code === SKILL_INTENT_REFUSED) return { kind: 'refused', reason: data?.reason }
    if (code === -32602 || code === -32600) return { kind: 'invalid' }
    if (code === -32601) return { kind: 'no method' }
    return { kind: 'other', text: `${String(code)} ${message ?? String(err)}` }
  }
}

/** Raw lines on a connection of their own, then a valid call; every answer that came back, parsed. */
async function rawFrames(lines: string[], probe: TxIntent): Promise<unknown[]> {
  const socket = net.createConnection(socketPath)
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  let text = ''
  socket.on('data', (d: Buffer) => (text += d.toString('utf8')))
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  for (const line of lines) socket.write(`${line}\n`)
  socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'probe', method: 'submitIntent', params: { intent: probe } })}\n`)
  const answered = () => text.split('\n').some((l) => l.includes('"probe"'))
  const deadline = Date.now() + 5000
  while (!answered() && Date.now() < deadline && !socket.closed) await new Promise((r) => setTimeout(r, 2))
  await new Promise((r) => setTimeout(r, 5)) // answers to the lines before the probe still on their way
  socket.end()
  await Promise.race([closed, new Promise((r) => setTimeout(r, 1000))])
  socket.destroy()
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown)
}

function oddLine(rng: Random, intent: TxIntent): string {
  const request = (over: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id: rng.int(1000), method: 'submitIntent', params: { intent }, ...over })
  const choices: Array<() => string> = [
    () => 'not json',
    () => request({}).slice(0, 1 + rng.int(80)),
    () => request({ jsonrpc: '1.0' }),
    () => request({ id: { nested: true } }),
    () => request({ id: 2 ** 80 }),
    () => request({ method: rng.pick(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'submitintent', '']) }),
    () => request({ params: rng.pick(oddValues) }),
    () => request({ params: { intent: rng.pick(oddValues) } }),
    () => JSON.stringify([JSON.parse(request({})), JSON.parse(request({}))]),
    () => request({}).replace('{', '{"__proto__":{"polluted":true},'),
    () => request({}).replace('"intent":{', '"intent":{"__proto__":{"action":{"type":"transfer_native"}},'),
    () => JSON.stringify({ jsonrpc: '2.0', method: 'submitIntent', params: { intent } }), // a notification: no answer, nothing submitted
    () => '\u0000\u0001\u00ff',
    () => request({}).replace(/"/g, "'"),
  ]
  return rng.pick(choices)()
}

describe('the skill API socket', () => {
  it('takes an intent id in either case, as the HTTP routes do, and hands it on in lower case', async () => {
    const intent = makeIntent({ action: actions.native() })
    const before = submitted.length
    const outcome = await submit('submitIntent', { intent: { ...intent, id: intent.id.toUpperCase() } })
    expect(outcome).toEqual({ kind: 'ok', result: { status: 200, body: { intentId: intent.id } } })
    expect(submitted.slice(before)).toEqual([stamped(intent)])
    // Another spelling of the same UUID is not read as it.
    expect(await submit('submitIntent', { intent: { ...intent, id: `{${intent.id}}` } })).toEqual({ kind: 'invalid' })
  })
})

describe('the skill API socket under fuzzed calls', () => {
  it(`lets through only declared, valid intents, stamped with the skill's name (seed ${SEED}, ${ROUNDS} rounds)`, async () => {
    const rng = seededRandom(SEED)
    const bases = valid()
    const tally: Record<string, number> = {}
    const problems: string[] = []
    for (let round = 0; round < ROUNDS && problems.length < 10; round++) {
      const base = rng.pick(bases)
      const roll = rng.next()
      if (roll < 0.1) {
        const before = submitted.length
        const answers = await rawFrames(Array.from({ length: 1 + rng.int(4) }, () => oddLine(rng, base)), makeIntent({ action: actions.native() }))
        tally.raw = (tally.raw ?? 0) + 1
        for (const a of answers) {
          const { jsonrpc, error } = a as { jsonrpc?: unknown; error?: { code?: unknown } }
          if (jsonrpc !== '2.0') problems.push(`round ${round}: a raw answer that is not JSON-RPC 2.0: ${JSON.stringify(a).slice(0, 200)}`)
          if (error && (error.code === -32603 || typeof error.code !== 'number')) problems.push(`round ${round}: internal error for a raw frame: ${JSON.stringify(a).slice(0, 200)}`)
        }
        if (!answers.some((a) => (a as { id?: unknown }).id === 'probe' && 'result' in (a as object))) {
          problems.push(`round ${round}: the valid call after raw frames got no result: ${JSON.stringify(answers).slice(0, 300)}`)
        }
        for (const intent of submitted.slice(before)) problems.push(...checkSubmitted(intent, round))
        continue
      }
      let method = 'submitIntent'
      let params: unknown
      let sent: unknown
      if (roll < 0.7) sent = mutate(rng, base as unknown as Record<string, unknown>, bases)
      else if (roll < 0.8) sent = spoofSource(rng, base as unknown as Record<string, unknown>)
      else if (roll < 0.85) sent = base
      if (sent !== undefined) params = rng.chance(0.9) ? { intent: sent } : { intent: sent, [rng.pick(['extra', '__proto__', 'constructor'])]: 1 }
      else if (roll < 0.95) params = rng.pick(oddValues)
      else {
        method = rng.pick(['submitIntent ', 'SubmitIntent', '__proto__', 'constructor', 'toString', 'sign', ''])
        params = { intent: base }
      }
      const before = submitted.length
      const forbiddenBefore = forbidden.length
      const outcome = await submit(method, params)
      tally[outcome.kind] = (tally[outcome.kind] ?? 0) + 1
      const arrived = submitted.slice(before)
      // As the socket sees it (JSON turns -0 into 0 and so on).
      const wire = params === undefined ? undefined : (JSON.parse(JSON.stringify(params)) as unknown)
      const intent = (wire as { intent?: unknown } | null)?.intent
      const what = `round ${round} (${method} ${JSON.stringify(params)?.slice(0, 160)})`
      switch (outcome.kind) {
        case 'ok': {
          if (arrived.length !== 1) problems.push(`${what}: a result with ${arrived.length} intents submitted`)
          const got = arrived[0]!
          if (!isIntentInput(intent)) problems.push(`${what}: an intent that fails the schema went through`)
          else if (JSON.stringify(got) !== JSON.stringify(stamped(intent))) problems.push(`${what}: submitted ${JSON.stringify(got)}, not the sent intent stamped with the skill`)
          expect(outcome.result).toEqual({ status: 200, body: { intentId: got.id } })
          problems.push(...checkSubmitted(got, round))
          break
        }
        case 'refused': {
          if (arrived.length > 0) problems.push(`${what}: refused, yet submitted`)
          if (outcome.reason !== 'forbidden_action') problems.push(`${what}: refused for ${String(outcome.reason)}`)
          if (forbidden.length !== forbiddenBefore + 1) problems.push(`${what}: refused without being reported as forbidden`)
          const declared = isIntentInput(intent) && permissions.actions.includes(intent.action.type) && permissions.chains.includes(intent.chain.chainId)
          if (declared) problems.push(`${what}: a declared, valid intent was refused as forbidden`)
          break
        }
        case 'invalid':
        case 'no method':
          if (arrived.length > 0) problems.push(`${what}: ${outcome.kind}, yet submitted`)
          if (outcome.kind === 'invalid' && method === 'submitIntent' && isIntentInput(intent) && wire !== null && typeof wire === 'object' && Object.keys(wire).length === 1) {
            problems.push(`${what}: a valid intent refused as invalid params`)
          }
          if (outcome.kind === 'no method' && method === 'submitIntent') problems.push(`${what}: submitIntent unknown`)
          break
        default:
          problems.push(`${what}: ${outcome.text}`)
      }
    }
    expect(problems, `seed ${SEED}; outcomes ${JSON.stringify(tally)}`).toEqual([])
    // The run exercised each kind of answer (else the fuzzer, not the socket, is broken).
    for (const kind of ['ok', 'refused', 'invalid', 'no method', 'raw']) expect(tally[kind] ?? 0, `${kind} in ${JSON.stringify(tally)}`).toBeGreaterThan(0)
  }, 120_000)
})

/** What may reach the pipeline at all: a valid intent of a declared action and chain, from this skill. */
function checkSubmitted(intent: TxIntent, round: number): string[] {
  const out: string[] = []
  if (!isIntent(intent)) out.push(`round ${round}: the pipeline got an intent that fails the schema: ${JSON.stringify(intent).slice(0, 200)}`)
  if (!permissions.actions.includes(intent.action?.type)) out.push(`round ${round}: the pipeline got an undeclared action ${String(intent.action?.type)}`)
  if (!permissions.chains.includes(intent.chain?.chainId)) out.push(`round ${round}: the pipeline got an undeclared chain ${String(intent.chain?.chainId)}`)
  if (intent.metadata?.source !== `skill:${SKILL}`) out.push(`round ${round}: the pipeline got source ${JSON.stringify(intent.metadata?.source)}`)
  if (Object.getPrototypeOf(intent) !== Object.prototype || ({} as { polluted?: unknown }).polluted !== undefined) out.push(`round ${round}: a prototype was changed`)
  return out
}
