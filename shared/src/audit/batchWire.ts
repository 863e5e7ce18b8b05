import type { PreparedEvent } from './writer.js'

// A batch of prepared events as one string, for the audit writer thread.
// postMessage clones a string with one copy, while an array of objects goes
// through V8's structured serializer field by field: with the gateway under
// load that was about a tenth of its event loop's busy time
// (bench/RESULTS.md, issue 17). Every field is written as
// `<length>:<characters>`, so no value needs escaping and none can be
// mistaken for a separator.

/** One string holding every field of every event, in order. */
export function encodeBatch(events: readonly PreparedEvent[]): string {
  let out = ''
  for (const e of events) {
    const ts = String(e.timestamp)
    out += `${e.id.length}:${e.id}${ts.length}:${ts}${e.intentId.length}:${e.intentId}${e.event.length}:${e.event}${e.dataJcs.length}:${e.dataJcs}`
  }
  return out
}

/** The events encodeBatch wrote; throws on anything it could not have written. */
export function decodeBatch(wire: string): PreparedEvent[] {
  const events: PreparedEvent[] = []
  let at = 0
  const field = (): string => {
    const colon = wire.indexOf(':', at)
    const digits = colon < 0 ? '' : wire.slice(at, colon)
    if (!/^(0|[1-9][0-9]*)$/.test(digits)) throw new Error(`audit batch: malformed field length at ${at}`)
    const end = colon + 1 + Number(digits)
    if (end > wire.length) throw new Error(`audit batch: field at ${at} runs past the end`)
    at = end
    return wire.slice(colon + 1, end)
  }
  while (at < wire.length) {
    const id = field()
    const ts = field()
    const timestamp = Number(ts)
    if (!Number.isSafeInteger(timestamp) || String(timestamp) !== ts) throw new Error(`audit batch: timestamp ${JSON.stringify(ts)} is not an integer`)
    events.push({ id, timestamp, intentId: field(), event: field(), dataJcs: field() })
  }
  return events
}
