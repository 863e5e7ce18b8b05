// SERVICE_* names no countersign process reads. A misspelt name is ignored
// like an unset one, so "SERVICE_APROVAL_MODE=web" would leave the default
// in force with no word said; the services say it at start instead.
// A warning, not a refusal: SERVICE_ is a common prefix, and an environment
// may carry another program's SERVICE_NAME without anything being wrong.
import { SUPPORTED_CHAIN_IDS } from '../types.js'
import type { Env } from './read.js'
import { VARIABLES } from './variables.js'

/** Read by `npm start` only (scripts/dev-stack.mjs), listed in the README beside the table's names. */
const LAUNCHER_VARIABLES = ['SERVICE_DEV_CHAIN_PORT'] as const

/** Every SERVICE_* name some process, CLI or the launcher reads, the per-chain ones spelt out. */
export function knownServiceVariables(): ReadonlySet<string> {
  const names = new Set<string>(LAUNCHER_VARIABLES)
  for (const name of Object.keys(VARIABLES)) {
    if (!name.includes('{chainId}')) names.add(name)
    else for (const chainId of SUPPORTED_CHAIN_IDS) names.add(name.replace('{chainId}', String(chainId)))
  }
  return names
}

export interface UnknownVariable {
  name: string
  /** The known name one or two edits away, when there is exactly one such nearest. */
  suggestion?: string
}

/** The set SERVICE_* names countersign does not read, in name order. Blank values count as unset and are skipped. */
export function unknownServiceVariables(env: Env, known: ReadonlySet<string> = knownServiceVariables()): UnknownVariable[] {
  const unknown: UnknownVariable[] = []
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('SERVICE_') || known.has(name) || !value?.trim()) continue
    const suggestion = nearestName(name, known)
    unknown.push(suggestion ? { name, suggestion } : { name })
  }
  return unknown.sort((a, b) => (a.name < b.name ? -1 : 1))
}

/** One line per unknown name, for the start-up output. */
export function describeUnknownVariable({ name, suggestion }: UnknownVariable): string {
  return `${name} is not a countersign setting and is ignored${suggestion ? ` (did you mean ${suggestion}?)` : ''}`
}

function nearestName(name: string, known: ReadonlySet<string>): string | undefined {
  const MAX_EDITS = 2
  let best: string | undefined
  let bestDistance = MAX_EDITS + 1
  let tied = false
  for (const candidate of known) {
    // Capped one above the best so far: an answer at the best is exact, so a tie is a real tie.
    const distance = editDistance(name, candidate, bestDistance + 1)
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
      tied = false
    } else if (distance === bestDistance && best !== undefined) tied = true
  }
  return best !== undefined && !tied ? best : undefined
}

/** Levenshtein distance, or `ceiling` as soon as it cannot be below it. */
function editDistance(a: string, b: string, ceiling: number): number {
  if (Math.abs(a.length - b.length) >= ceiling) return ceiling
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    let rowMin = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      current.push(value)
      if (value < rowMin) rowMin = value
    }
    if (rowMin >= ceiling) return ceiling
    previous = current
  }
  return Math.min(previous[b.length]!, ceiling)
}

/** Writes one WARNING line per unknown name, whatever the log level: an operator must see a setting that does nothing. */
export function warnUnknownVariables(env: Env, service: string, write: (line: string) => void = (line) => process.stderr.write(line)): void {
  for (const unknown of unknownServiceVariables(env)) write(`countersign ${service}: WARNING: ${describeUnknownVariable(unknown)}\n`)
}
