import { readFileSync } from 'node:fs'

/** One Containerfile instruction: its keyword (upper case) and the rest of it. */
export interface ContainerfileInstruction {
  op: string
  args: string
}

/** A Containerfile's instructions, continuation lines joined and comments dropped (the deploy tests read what the image build runs). */
export function containerfileInstructions(file: string): ContainerfileInstruction[] {
  const out: ContainerfileInstruction[] = []
  let pending = ''
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim()
    if (line.startsWith('#') || (pending === '' && line === '')) continue
    pending += (pending ? ' ' : '') + line.replace(/\\$/, '').trim()
    if (line.endsWith('\\')) continue
    const m = /^([A-Za-z]+)\s*(.*)$/.exec(pending)
    if (m) out.push({ op: m[1]!.toUpperCase(), args: m[2]! })
    pending = ''
  }
  return out
}
