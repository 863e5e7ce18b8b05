import { decodeAbiParameters, type Hex } from 'viem'
import { chainText } from '../chain/chainText.js'

const PANIC_CODES: Record<string, string> = {
  '1': 'assertion failed',
  '17': 'arithmetic overflow or underflow',
  '18': 'division by zero',
  '33': 'invalid enum value',
  '34': 'invalid storage byte array',
  '49': 'pop on an empty array',
  '50': 'array index out of bounds',
  '65': 'out of memory',
  '81': 'call to an uninitialised function',
}

/**
 * Error(string), Panic(uint256), or the raw selector of a custom error. The
 * reason string and the node's message are the contract's words: escaped and
 * clipped (chainText), never passed on raw.
 */
export function decodeRevertReason(data: string | undefined | null, fallback?: string): string {
  const said = fallback === undefined ? undefined : chainText(fallback)
  if (!data || data === '0x') return said ?? 'reverted without a reason'
  try {
    if (data.startsWith('0x08c379a0')) return chainText(decodeAbiParameters([{ type: 'string' }], `0x${data.slice(10)}` as Hex)[0])
    if (data.startsWith('0x4e487b71')) {
      const code = decodeAbiParameters([{ type: 'uint256' }], `0x${data.slice(10)}` as Hex)[0].toString()
      return `panic: ${PANIC_CODES[code] ?? `code ${code}`}`
    }
  } catch {
    /* fall through to the raw form */
  }
  return `custom error ${chainText(data.slice(0, 10))}${said ? ` (${said})` : ''}`
}
