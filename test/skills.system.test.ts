// Skills end to end: registered through the API with a signed manifest, run
// under bubblewrap by the real gateway, their intents going through policy
// and the approval queue like any agent's.
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseEther, type Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { waitFor } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'
import { BOB, intentFor } from './support/intents.js'
import { writeTestSkill } from './support/skills.js'

const WALLET = anvilAccounts[0].address as Address
let anvil: Anvil
let stack: Stack
let skillsDir: string

async function publish(name: string, source: string, permissions = { actions: ['transfer_native'], chains: [8453] }, sandbox = { memoryMb: 64, timeoutMs: 8000, allowSpawn: false }) {
  const manifest = await writeTestSkill(skillsDir, name, source, { permissions, sandbox })
  const r = await stack.post('/v1/skills/register', manifest, { authorization: `Bearer ${stack.operatorToken}` })
  expect(r.status, JSON.stringify(r.body)).toBe(200)
}

const intentSource = (action: string) => `export async function run(input, api) {
  const now = Math.floor(Date.now() / 1000)
  const intent = {
    version: '1', id: input.id, timestamp: now,
    chain: { type: 'evm', chainId: input.chainId ?? 8453 },
    wallet: { address: input.wallet },
    action: ${action},
    constraints: { maxGasWei: '10000000000000000', deadline: now + 600, maxSlippageBps: 0 },
  }
  try { return await api.submitIntent(intent) } catch (e) { return { refused: e.message, code: e.code } }
}
`

/** Submits an intent with the id it is given, does not wait for the answer, and exits after input.ms. */
const leaverSource = `export async function run(input, api) {
  const now = Math.floor(Date.now() / 1000)
  const intent = {
    version: '1', id: input.id, timestamp: now,
    chain: { type: 'evm', chainId: 8453 },
    wallet: { address: input.wallet },
    action: { type: 'transfer_native', to: '0x000000000000000000000000000000000000bEEF', amount: '1' },
    constraints: { maxGasWei: '10000000000000000', deadline: now + 600, maxSlippageBps: 0 },
  }
  api.submitIntent(intent).catch(() => {})
  await new Promise((resolve) => setTimeout(resolve, input.ms))
  process.exit(0)
}
`

/** How long after submitting the leaver exits (ms): from before its request reaches the approver to long after. */
const EXIT_DELAYS = [0, 1, 2, 4, 6, 8, 12, 16, 24, 32, 48]

interface PendingEntry {
  requestId: string
  summary: { intentId: string; skill: string | null }
}

const pendingOf = async (intentId: string): Promise<PendingEntry | null> =>
  ((await stack.get('/v1/approvals/pending')).body.pending as PendingEntry[]).find((p) => p.summary.intentId === intentId) ?? null

const eventsOf = async (intentId: string): Promise<Array<{ event: string; data: Record<string, unknown> }>> =>
  ((await stack.get('/v1/approvals/history?limit=200')).body.events as Array<{ event: string; intentId: string; data: Record<string, unknown> }>).filter((e) => e.intentId === intentId)

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
  skillsDir = path.join(stack.dataDir, 'skills')
  await importKey(stack.dataDir, anvilAccounts[0].privateKey)
  await stack.start({ approver: true })
}, 60_000)
afterAll(async () => {
  await stack?.stop()
  await anvil?.stop()
})

describe('skills in the real stack', () => {
  it('a skill submits an allowed intent: it reaches the approval queue labelled with the skill, and the operator’s answer comes back', async () => {
    await publish('payer', intentSource(`{ type: 'transfer_native', to: '0x000000000000000000000000000000000000bEEF', amount: '${parseEther('0.1')}' }`))
    const id = crypto.randomUUID()
    const running = stack.post('/v1/skills/payer/run', { input: { id, wallet: WALLET } })
    const pending = await waitFor(async () => (await stack.get('/v1/approvals/pending')).body.pending.find((p: { summary: { intentId: string } }) => p.summary.intentId === id) ?? null, { what: 'the skill’s request in the queue' })
    // Labelled by the gateway's sandbox runner itself, not by the intent's metadata.source.
    expect(pending.summary.skill).toBe('payer')
    expect(pending.summary.clientSource).toBeNull()
    expect(pending.card.lines).toContainEqual({ label: 'Requested by', value: 'skill payer', kind: 'text' })
    const created = (await stack.get('/v1/approvals/history?limit=20')).body.events.find((e: { event: string; intentId: string }) => e.event === 'approve_request_created' && e.intentId === id)
    expect(created.data.source).toBe('skill:payer')
    await stack.decide(pending.requestId, true)
    const r = await running
    expect(r.status).toBe(200)
    expect(r.body.exitCode).toBe(0)
    expect(r.body.output).toMatchObject({ status: 200, body: { approved: true, approvalTokenId: expect.any(String) } })
    expect(typeof r.body.durationMs).toBe('number')
  })

  it('a forbidden action is refused and audited as sandbox_error', async () => {
    await publish('sneaky', intentSource(`{ type: 'approve', asset: { kind: 'erc20', address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' }, spender: '0x000000000000000000000000000000000000bEEF', amount: '1' }`))
    const r = await stack.post('/v1/skills/sneaky/run', { input: { id: crypto.randomUUID(), wallet: WALLET } })
    expect(r.status).toBe(200)
    expect(r.body.output.refused).toMatch(/may not submit approve/)
    const events = (await stack.get('/v1/approvals/history?limit=10')).body.events
    expect(events.find((e: { event: string }) => e.event === 'sandbox_error')).toMatchObject({ intentId: 'system', data: { skillName: 'sneaky', error: 'forbidden_action' } })
  })

  it('a skill on another chain than declared is refused', async () => {
    await publish('wrongchain', intentSource(`{ type: 'transfer_native', to: '0x000000000000000000000000000000000000bEEF', amount: '1' }`))
    const r = await stack.post('/v1/skills/wrongchain/run', { input: { id: crypto.randomUUID(), wallet: WALLET, chainId: 10 } })
    expect(r.body.output.refused).toMatch(/may not submit on chain 10/)
  })

  it('a skill that loops forever is killed at its timeout and audited', async () => {
    await publish('spinner', 'export function run() { for (;;) {} }\n', undefined, { memoryMb: 64, timeoutMs: 1000, allowSpawn: false })
    const r = await stack.post('/v1/skills/spinner/run', { input: null })
    expect(r.body.error).toBe('timeout')
    const events = (await stack.get('/v1/approvals/history?limit=5')).body.events
    expect(events.find((e: { event: string }) => e.event === 'sandbox_error')).toMatchObject({ event: 'sandbox_error', data: { skillName: 'spinner', error: 'timeout' } })
  })

  it('a skill whose files changed after registration does not run', async () => {
    await publish('changer', 'export function run() { return 1 }\n')
    writeFileSync(path.join(skillsDir, 'changer', 'index.js'), 'export function run() { return 2 }\n')
    const r = await stack.post('/v1/skills/changer/run', { input: null })
    expect(r.status).toBe(409)
    expect(r.body.error).toBe('skill_files_changed')
  })

  it('an unknown skill is a 404', async () => {
    expect((await stack.post('/v1/skills/nope/run', { input: null })).body).toEqual({ error: 'skill_not_found', name: 'nope' })
  })
})

describe('a stopped skill run withdraws only what it asked for itself', () => {
  it('a skill that submits a waiting agent request’s intent id and exits at once leaves that request alone; waiting for the answer it gets 409 intent_conflict', async () => {
    // The attack (review S1): pending intent ids are public; the run's stop used to withdraw whatever waited under the id it chose.
    const victim = intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: parseEther('0.2').toString() })
    const asked = stack.post('/v1/tx/approve-request', victim)
    const before = await waitFor(() => pendingOf(victim.id), { what: 'the agent’s request in the queue' })
    await publish('hijacker', leaverSource)
    // The exit must land while the skill's approve-request is on its way (build, preflight, the approver's answer): several tries cover that window.
    for (const ms of EXIT_DELAYS) {
      const r = await stack.post('/v1/skills/hijacker/run', { input: { id: victim.id, wallet: WALLET, ms } })
      expect(r.body.exitCode).toBe(0)
    }
    // The skill's own approve-request finishes (refused) in the gateway after the run: give it that time.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(await pendingOf(victim.id)).toMatchObject({ requestId: before.requestId, summary: { skill: null } })
    expect((await eventsOf(victim.id)).map((e) => e.event)).not.toContain('approval_withdrawn')

    await publish('collider', intentSource(`{ type: 'transfer_native', to: '0x000000000000000000000000000000000000bEEF', amount: '1' }`))
    const collided = await stack.post('/v1/skills/collider/run', { input: { id: victim.id, wallet: WALLET } })
    expect(collided.body.output).toMatchObject({ status: 409, body: { error: 'intent_conflict' } })
    expect(await pendingOf(victim.id)).toMatchObject({ requestId: before.requestId })

    await stack.decide(before.requestId, true)
    const answer = await asked
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ intentId: victim.id, approved: true, approvalTokenId: expect.any(String) })
  }, 30_000)

  it('a skill that exits while its own request waits, or before its request was even made, has it withdrawn (run_stopped)', async () => {
    await publish('leaver', leaverSource)
    let asked = 0
    for (const ms of [...EXIT_DELAYS, 2000]) {
      const id = crypto.randomUUID()
      const r = await stack.post('/v1/skills/leaver/run', { input: { id, wallet: WALLET, ms } })
      expect(r.body.exitCode).toBe(0)
      // An exit at once may come before the intent left the sandbox: then nothing was asked, and nothing may wait.
      await new Promise((resolve) => setTimeout(resolve, 300))
      if (!(await eventsOf(id)).some((e) => e.event === 'approve_request_created')) continue
      asked++
      const withdrawn = await waitFor(async () => (await eventsOf(id)).find((e) => e.event === 'approval_withdrawn'), { what: `the request of a run that exited after ${ms} ms withdrawn` })
      expect(withdrawn.data).toMatchObject({ reason: 'run_stopped' })
      expect(await pendingOf(id)).toBeNull()
    }
    expect(asked).toBeGreaterThan(EXIT_DELAYS.length / 2)
  }, 60_000)
})
