// The README's configuration table lists every variable with the form its reader accepts.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { VARIABLES } from './variables.js'

const readme = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../README.md'), 'utf8')
const rows = new Map<string, string>()
for (const line of readme.split('\n')) {
  const cells = line.split('|').map((c) => c.trim())
  if (cells.length < 5 || !cells[1]?.startsWith('`')) continue
  for (const name of cells[1].matchAll(/`([A-Z0-9_]+(?:{chainId})?)`/g)) rows.set(name[1]!, line)
}

describe('README configuration table', () => {
  it.each(Object.keys(VARIABLES))('lists %s with its accepted form', (name) => {
    const row = rows.get(name)
    expect(row, `${name} is missing from README.md's configuration table`).toBeDefined()
    expect(row).toContain(VARIABLES[name as keyof typeof VARIABLES].form)
  })
})
