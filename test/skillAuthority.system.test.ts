// Who may register and revoke skills, against the real processes, in both
// layouts: one data directory shared by the three processes, and one data
// directory per process (as the systemd units run them), where the gateway
// cannot read the approver's operator-token file. In both, the gateway asks
// the approver over approver.sock whether a presented token is valid.
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SUPPORTED_CHAIN_IDS } from '@countersign/shared'
import { hashSkillFolder, signManifest } from '../services/gateway/dist/cli/skill.js'
import { tempDataDir, waitFor } from './support/processes.js'
import { Stack } from './support/stack.js'

const listedKey = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6' as const
const listed = privateKeyToAccount(listedKey)
const SOURCE = 'export function run(input) { return { echo: input } }\n'

function writeSkill(skillsDir: string, name: string): string {
  const dir = path.join(skillsDir, name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, 'index.js'), SOURCE)
  return dir
}

async function manifestFor(skillsDir: string, name: string, key: `0x${string}`, o: { files?: Array<{ path: string; sha256: string }> } = {}) {
  const account = privateKeyToAccount(key)
  return signManifest(
    {
      version: '1',
      name,
      publisher: { name: 'Anyone', address: account.address, contact: 'ops@example.org' },
      permissions: { actions: ['transfer', 'transfer_native', 'approve', 'swap_exact_in', 'swap_exact_out'], chains: [...SUPPORTED_CHAIN_IDS], network: false, filesystem: false },
      sandbox: { memoryMb: 512, timeoutMs: 60000, allowSpawn: true },
      files: o.files ?? hashSkillFolder(writeSkill(skillsDir, name)),
    } as never,
    key,
  )
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

async function del(stack: Stack, name: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.url}/v1/skills/${name}`, { method: 'DELETE', headers })
  return { status: res.status, body: await res.json() }
}

describe('one data directory for all three processes', () => {
  let stack: Stack
  const skillsDir = () => path.join(stack.dataDir, 'skills')
  beforeAll(async () => {
    stack = new Stack({ env: { SERVICE_SKILL_PUBLISHERS: listed.address } })
    await stack.start({ approver: true })
  }, 60_000)
  afterAll(() => stack?.stop())

  it('the attack: no credential, a throwaway key, files: [], every action and chain, allowSpawn, 512 MB -> 401 operator_auth_required, audited', async () => {
    const throwaway = generatePrivateKey()
    const r = await stack.post('/v1/skills/register', await manifestFor(skillsDir(), 'squatter', throwaway, { files: [] }))
    expect(r.status).toBe(401)
    expect(r.body).toMatchObject({ registered: false, name: 'squatter', manifestHash: '', error: 'operator_auth_required' })
    expect((await stack.get('/v1/skills')).body).toEqual([])
    const events = (await stack.get('/v1/approvals/history?limit=5')).body.events
    expect(events.find((e: { event: string }) => e.event === 'skill_registration_failed')).toMatchObject({ event: 'skill_registration_failed', data: { skillName: 'squatter', reason: 'operator_auth_required' } })
    // A wrong token is no better.
    const wrong = await stack.post('/v1/skills/register', await manifestFor(skillsDir(), 'squatter', throwaway), bearer('not-the-token'))
    expect(wrong.status).toBe(401)
  })

  it('a publisher in SERVICE_SKILL_PUBLISHERS registers without the token; one not listed gets 401, and registers with it', async () => {
    const byListed = await stack.post('/v1/skills/register', await manifestFor(skillsDir(), 'listed-skill', listedKey))
    expect(byListed.status, JSON.stringify(byListed.body)).toBe(200)
    const other = generatePrivateKey()
    const byOther = await stack.post('/v1/skills/register', await manifestFor(skillsDir(), 'other-skill', other))
    expect(byOther.status).toBe(401)
    expect(byOther.body.error).toBe('operator_auth_required')
    const withToken = await stack.post('/v1/skills/register', await manifestFor(skillsDir(), 'other-skill', other), bearer(stack.operatorToken))
    expect(withToken.status, JSON.stringify(withToken.body)).toBe(200)
    const events = (await stack.get('/v1/approvals/history?limit=10')).body.events
    const registered = events.filter((e: { event: string }) => e.event === 'skill_registered')
    expect(registered.map((e: { data: unknown }) => e.data)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ skillName: 'listed-skill', authorisedBy: 'listed_publisher' }),
        expect.objectContaining({ skillName: 'other-skill', authorisedBy: 'operator_token' }),
      ]),
    )
    // Revocation needs the token even for a listed publisher's skill.
    expect((await del(stack, 'listed-skill')).status).toBe(401)
    expect((await del(stack, 'listed-skill', bearer(stack.operatorToken))).body).toEqual({ name: 'listed-skill', revoked: true })
  })

  it("an operator's revoke of a listed publisher's skill holds: the same signed manifest again without a credential is 401, audited", async () => {
    // Found by review: DELETE with the operator token, then the same signed manifest POSTed with no token answered 200 and the skill was back.
    const signed = await manifestFor(skillsDir(), 'revoked-skill', listedKey)
    expect((await stack.post('/v1/skills/register', signed)).status).toBe(200)
    expect((await del(stack, 'revoked-skill', bearer(stack.operatorToken))).body).toEqual({ name: 'revoked-skill', revoked: true })
    const again = await stack.post('/v1/skills/register', signed)
    expect(again.status).toBe(401)
    expect(again.body).toMatchObject({ registered: false, name: 'revoked-skill', manifestHash: '', error: 'operator_auth_required' })
    expect(again.body.message).toMatch(/registering revoked-skill again after an operator revoked it \(manifest 0x[0-9a-f]{64}\) needs the operator token/)
    expect((await stack.get('/v1/skills/revoked-skill')).status).toBe(404)
    const events = (await stack.get('/v1/approvals/history?limit=5')).body.events
    expect(events.find((e: { event: string }) => e.event === 'skill_registration_failed')).toMatchObject({ data: { skillName: 'revoked-skill', reason: 'operator_auth_required' } })
    // The operator can bring it back.
    const byOperator = await stack.post('/v1/skills/register', signed, bearer(stack.operatorToken))
    expect(byOperator.status, JSON.stringify(byOperator.body)).toBe(200)
  })
})

describe('one data directory per process (the systemd layout)', () => {
  let stack: Stack
  let approverDir: string
  const skillsDir = () => path.join(stack.dataDir, 'skills')
  const approverToken = () => readFileSync(path.join(approverDir, 'operator-token'), 'utf8').trim()
  beforeAll(async () => {
    // The gateway and the signer keep stack.dataDir; the approver has its
    // own, where it writes operator-token; approver.sock lives in a socket
    // directory of its own, as /run/countersign/approval does.
    approverDir = tempDataDir()
    const sockets = tempDataDir()
    const approverSocket = path.join(sockets, 'approver.sock')
    stack = new Stack({ env: { SERVICE_APPROVER_SOCKET: approverSocket } })
    symlinkSync(path.join(stack.dataDir, 'audit.db'), path.join(approverDir, 'audit.db'))
    await stack.startSigner()
    await stack.startApprover({ SERVICE_DATA_DIR: approverDir, SERVICE_GRANT_SOCKET: path.join(stack.dataDir, 'run', 'grant.sock') })
    await stack.startGateway()
  }, 60_000)
  afterAll(() => stack?.stop())

  it('the gateway has no token file to read, and still accepts the operator token for registration and revocation', async () => {
    expect(existsSync(path.join(stack.dataDir, 'operator-token'))).toBe(false)
    const key = generatePrivateKey()
    const without = await stack.post('/v1/skills/register', await manifestFor(skillsDir(), 'split', key))
    expect(without.status).toBe(401)
    const r = await stack.post('/v1/skills/register', await manifestFor(skillsDir(), 'split', key), bearer(approverToken()))
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect((await del(stack, 'split', bearer('wrong'))).status).toBe(401)
    expect((await del(stack, 'split', bearer(approverToken()))).body).toEqual({ name: 'split', revoked: true })
  })
})

describe('named operators (SERVICE_OPERATORS_FILE)', () => {
  const ALICE = randomBytes(32).toString('base64url')
  const BOB = randomBytes(32).toString('base64url')
  const sha256 = (t: string) => createHash('sha256').update(t).digest('hex')
  let stack: Stack
  const skillsDir = () => path.join(stack.dataDir, 'skills')
  beforeAll(async () => {
    stack = new Stack()
    const file = path.join(stack.dataDir, 'operators.json')
    writeFileSync(file, JSON.stringify({ operators: [{ name: 'alice', tokenSha256: sha256(ALICE) }, { name: 'bob', tokenSha256: sha256(BOB) }] }))
    chmodSync(file, 0o600)
    await stack.start({ approver: true, approverEnv: { SERVICE_OPERATORS_FILE: file } })
  }, 60_000)
  afterAll(() => stack?.stop())

  it("registration and revocation accept any listed operator's token and refuse a wrong one, the hash itself included", async () => {
    expect(existsSync(path.join(stack.dataDir, 'operator-token'))).toBe(false)
    const key = generatePrivateKey()
    const wrongs = ['not-a-token', sha256(ALICE), randomBytes(32).toString('base64url')]
    for (const wrong of wrongs) {
      const r = await stack.post('/v1/skills/register', await manifestFor(skillsDir(), 'named', key), bearer(wrong))
      expect(r.status).toBe(401)
      expect(r.body).toMatchObject({ registered: false, error: 'operator_auth_required' })
    }
    expect((await stack.get('/v1/skills')).body).toEqual([])
    // The approver audits refused tokens: the first at once, the rest of the minute summed into one row later.
    const refusedRows = async () => (await stack.get('/v1/approvals/history?limit=50')).body.events.filter((e: { event: string }) => e.event === 'operator_sign_in_failed')
    const refused = await waitFor(async () => ((await refusedRows()).length > 0 ? refusedRows() : null), { what: 'the first operator_sign_in_failed row' })
    expect(refused).toEqual([expect.objectContaining({ intentId: 'system', data: expect.objectContaining({ count: 1, places: { gateway_operator_route: 1 } }) })])
    const byAlice = await stack.post('/v1/skills/register', await manifestFor(skillsDir(), 'named', key), bearer(ALICE))
    expect(byAlice.status, JSON.stringify(byAlice.body)).toBe(200)
    expect((await del(stack, 'named', bearer(sha256(BOB)))).status).toBe(401)
    expect((await del(stack, 'named', bearer(BOB))).body).toEqual({ name: 'named', revoked: true })
    const events = JSON.stringify((await stack.get('/v1/approvals/history?limit=50')).body.events)
    expect(events).not.toContain(ALICE)
    expect(events).not.toContain(BOB)
    // The approver's shutdown writes the minute's remaining refusals (two registrations, one revocation): no token in any row.
    await stack.approver!.stop()
    const db = new Database(path.join(stack.dataDir, 'audit.db'), { readonly: true })
    try {
      const rows = db.prepare("SELECT data FROM audit_events WHERE event = 'operator_sign_in_failed' ORDER BY seq").all() as Array<{ data: string }>
      expect(rows.map((r) => JSON.parse(r.data))).toEqual([
        expect.objectContaining({ count: 1, places: { gateway_operator_route: 1 } }),
        expect.objectContaining({ count: 3, places: { gateway_operator_route: 3 } }),
      ])
      const everything = JSON.stringify(db.prepare('SELECT * FROM audit_events').all())
      for (const presented of [...wrongs, sha256(BOB), ALICE, BOB]) expect(everything).not.toContain(presented)
    } finally {
      db.close()
    }
  })
})
