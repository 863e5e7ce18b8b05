import { createHash } from 'node:crypto'
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadOperatorsFile, parseOperators, singleTokenOperators } from './operators.js'

const hash = (t: string) => createHash('sha256').update(t).digest('hex')
const ALICE = 'alice-token-alice-token-alice-token'
const BOB = 'bob-token-bob-token-bob-token-bob'

function writeOperators(content: unknown, mode = 0o600): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'cs-ops-')), 'operators.json')
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
  chmodSync(file, mode)
  return file
}

describe('operators', () => {
  it('a named operator is known by the hash of their token; nothing else passes', () => {
    const ops = loadOperatorsFile(writeOperators({ operators: [{ name: 'alice', tokenSha256: hash(ALICE) }, { name: 'bob', tokenSha256: hash(BOB) }] }))
    expect(ops.named).toBe(2)
    expect(ops.identify(ALICE)).toEqual({ name: 'alice' })
    expect(ops.identify(BOB)).toEqual({ name: 'bob' })
    expect(ops.identify(hash(ALICE))).toBeNull()
    expect(ops.identify('')).toBeNull()
    expect(ops.identify(undefined)).toBeNull()
  })

  it('the single token keeps working and carries no name', () => {
    const ops = singleTokenOperators(ALICE)
    expect(ops.identify(ALICE)).toEqual({ name: null })
    expect(ops.identify(BOB)).toBeNull()
  })

  it('refuses at start: a file others can read, bad JSON, bad names or hashes, duplicates', () => {
    const good = { operators: [{ name: 'alice', tokenSha256: hash(ALICE) }] }
    expect(() => loadOperatorsFile(writeOperators(good, 0o644))).toThrow(/chmod 600/)
    expect(() => loadOperatorsFile(writeOperators('{nope'))).toThrow(/not JSON/)
    expect(() => parseOperators({ operators: [] })).toThrow(/1 to 100/)
    expect(() => parseOperators({ operators: [{ name: 'alice', token: ALICE }] })).toThrow(/exactly "name" and "tokenSha256"/)
    expect(() => parseOperators({ operators: [{ name: '\u202eevil', tokenSha256: hash(ALICE) }] })).toThrow(/name must be/)
    expect(() => parseOperators({ operators: [{ name: 'alice', tokenSha256: ALICE }] })).toThrow(/64 lowercase hex/)
    expect(() => parseOperators({ operators: [{ name: 'alice', tokenSha256: hash(ALICE) }, { name: 'alice', tokenSha256: hash(BOB) }] })).toThrow(/appears twice/)
    expect(() => parseOperators({ operators: [{ name: 'alice', tokenSha256: hash(ALICE) }, { name: 'bob', tokenSha256: hash(ALICE) }] })).toThrow(/share a token/)
    expect(() => parseOperators({ operators: good.operators, extra: 1 })).toThrow(/must be \{"operators"/)
  })

  it('a member given twice is refused, naming it: JSON.parse would keep the last (alice dropped, bob\'s second hash)', () => {
    const a = `{"name":"alice","tokenSha256":"${hash(ALICE)}"}`
    const b = `{"name":"bob","tokenSha256":"${hash(BOB)}","tokenSha256":"${hash(ALICE)}"}`
    expect(() => loadOperatorsFile(writeOperators(`{"operators":[${a}],"operators":[${a}]}`))).toThrow(/\/operators is given twice/)
    expect(() => loadOperatorsFile(writeOperators(`{"operators":[${a},${b}]}`))).toThrow(/\/operators\/1\/tokenSha256 is given twice/)
  })

  // Found by review: the file holds only hashes, so sha256("a") signed in with "a", and the agent reaches decide
  // through the gateway, with no limit on guesses.
  it("a named operator's token shorter than 32 characters (or with spaces) is never accepted, though its hash is listed", () => {
    const weak = ['a', 'x'.repeat(31), `${'y'.repeat(31)} z`]
    const ops = parseOperators({ operators: weak.map((t, i) => ({ name: `weak${i}`, tokenSha256: hash(t) })) })
    const named = loadOperatorsFile(writeOperators({ operators: [...ops, { name: 'alice', tokenSha256: hash(ALICE) }] }))
    for (const t of weak) expect(named.identify(t), t).toBeNull()
    expect(named.identify('x'.repeat(32))).toBeNull()
    expect(named.identify(ALICE)).toEqual({ name: 'alice' })
  })

  // Found by review: "alice", "alice " and "Alice" were three operators, and two of them met a quorum of two alone.
  it('names that read the same on a card are refused: a trailing space or dot, another case', () => {
    const entry = (name: string, token: string) => ({ name, tokenSha256: hash(token) })
    expect(() => parseOperators({ operators: [entry('alice ', ALICE)] })).toThrow(/not ending with a space or a dot/)
    expect(() => parseOperators({ operators: [entry('alice.', ALICE)] })).toThrow(/not ending with a space or a dot/)
    // A page shows two spaces as one.
    expect(() => parseOperators({ operators: [entry('alice  smith', ALICE)] })).toThrow(/no two spaces or dots in a row/)
    expect(() => parseOperators({ operators: [entry('alice', ALICE), entry('Alice', BOB)] })).toThrow(/"Alice" appears twice \(names are compared ignoring case\)/)
    expect(parseOperators({ operators: [entry('a', ALICE), entry('alice.smith', BOB), entry('ops@example-1', ALICE + '1')] }).map((o) => o.name)).toEqual(['a', 'alice.smith', 'ops@example-1'])
  })
})
