import { jsonString } from '../canonical/jcs.js'

/** Thrown for audit data that JSON cannot carry as it is (the event is then not written). */
export class AuditDataError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'AuditDataError'
  }
}

/** How deep audit data may nest: appends refuse more, and readers take a row nested deeper as one no append wrote. */
export const MAX_AUDIT_DATA_DEPTH = 64
const MAX_DEPTH = MAX_AUDIT_DATA_DEPTH

/**
 * Checks that `value` is plain JSON: null, booleans, strings, finite numbers,
 * arrays and objects whose prototype is Object's (or null), without cycles.
 * Object members that are undefined are allowed (they are left out, as
 * JSON.stringify does). A Date, Map, BigInt, class instance… throws an
 * AuditDataError naming where it is, instead of being stored as {} or lost.
 */
export function assertPlainJson(value: unknown, where: string): void {
  check(value, where, [])
}

/** The fast walk met something that is not plain JSON: assertPlainJson then says what and where. */
const NOT_PLAIN = Symbol('not plain JSON')

/**
 * assertPlainJson and RFC 8785 canonicalisation (canonicalize, jcs.ts) in
 * one walk: what every audit append does on the event loop of the process
 * appending, twice per build. The walk builds no paths and keeps no list of
 * parents (the depth limit ends a cycle too); when it meets anything that is
 * not plain JSON it stops, and assertPlainJson walks again to say what and
 * where, so the errors are the same as before.
 */
export function canonicalPlainJson(value: unknown, where: string): string {
  try {
    return canonicalPlain(value, 1)
  } catch (err) {
    if (err !== NOT_PLAIN) throw err
  }
  assertPlainJson(value, where)
  // The one thing assertPlainJson lets by: forEach skips an array's holes, where JSON.stringify would write null.
  throw new AuditDataError(`${where} holds an array with an empty slot (a sparse array), not plain JSON`)
}

function canonicalPlain(value: unknown, depth: number): string {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'string':
      return jsonString(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'number':
      if (!Number.isFinite(value)) throw NOT_PLAIN
      return String(value)
    case 'object':
      break
    default:
      throw NOT_PLAIN
  }
  if (depth > MAX_DEPTH) throw NOT_PLAIN
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ','
      out += canonicalPlain(value[i], depth + 1)
    }
    return `${out}]`
  }
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).sort()
  let out = '{'
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const member = record[key]
    if (member === undefined) continue
    if (out.length > 1) out += ','
    out += `${jsonString(key)}:${canonicalPlain(member, depth + 1)}`
  }
  return `${out}}`
}

function check(value: unknown, where: string, parents: object[]): void {
  if (value === null) return
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return
    case 'number':
      if (!Number.isFinite(value)) throw new AuditDataError(`${where} is ${value}, not plain JSON (numbers must be finite)`)
      return
    case 'object':
      break
    default:
      throw new AuditDataError(`${where} is not plain JSON (its type is ${typeof value})`)
  }
  const obj = value as object
  if (parents.includes(obj)) throw new AuditDataError(`${where} refers back to a containing value, not plain JSON (a cycle)`)
  if (parents.length >= MAX_DEPTH) throw new AuditDataError(`${where} is nested more than ${MAX_DEPTH} levels deep`)
  parents.push(obj)
  if (Array.isArray(obj)) {
    obj.forEach((item: unknown, i) => check(item, `${where}[${i}]`, parents))
  } else {
    const proto: unknown = Object.getPrototypeOf(obj)
    if (proto !== Object.prototype && proto !== null) {
      const name = (obj as { constructor?: { name?: string } }).constructor?.name ?? 'object'
      throw new AuditDataError(`${where} is not plain JSON (its type is ${name}; convert it to a string, number or plain object first)`)
    }
    for (const [key, member] of Object.entries(obj)) {
      if (member !== undefined) check(member, `${where}.${key}`, parents)
    }
  }
  parents.pop()
}

/**
 * Whether parsed JSON nests arrays and objects more than `max` levels deep
 * (the data object itself is level 1). Walks with its own stack: a row put
 * into audit.db by hand can nest deeper than any recursion survives, and
 * JSON.parse takes it where JSON.stringify then throws.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (typeof v !== 'object' || v === null) continue
    if (depth > max) return true
    for (const member of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof member === 'object' && member !== null) stack.push([member, depth + 1])
    }
  }
  return false
}
