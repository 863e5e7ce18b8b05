// RFC 8785 JSON Canonicalization Scheme. Our hashed inputs are plain JSON
// values (strings, finite numbers, booleans, null, arrays, objects); JCS then
// reduces to: ECMAScript number and string serialisation (what JSON.stringify
// does) and object members sorted by their UTF-16 code units (what the
// default Array.prototype.sort does).
//
// Written with plain loops: it runs for every build (the txRequestHash; the
// two audit events go through canonicalPlainJson, the same walk) on the
// gateway's event loop.

export class CanonicalizationError extends Error {}

/**
 * Nothing in it that JSON.stringify would escape: no quote, backslash or
 * control character, and no UTF-16 surrogate (lone ones are escaped since
 * ES2019; pairs are not, but are left to JSON.stringify all the same).
 */
const NOTHING_TO_ESCAPE = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/

/**
 * A string as JSON.stringify writes it. Most strings hashed here (addresses,
 * hashes, ids, descriptions) have nothing to escape, and quoting them
 * directly takes a third less time than the call.
 */
export function jsonString(value: string): string {
  return NOTHING_TO_ESCAPE.test(value) ? `"${value}"` : JSON.stringify(value)
}

export function canonicalize(value: unknown): string {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false'
    case 'string':
      return jsonString(value)
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalizationError('JCS cannot represent a non-finite number')
      // ECMAScript's Number::toString, as JSON.stringify writes a finite number (-0 as 0).
      return String(value)
    case 'object': {
      if (Array.isArray(value)) {
        let out = '['
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ','
          out += canonicalize(value[i])
        }
        return `${out}]`
      }
      const record = value as Record<string, unknown>
      const keys = Object.keys(record).sort()
      let out = '{'
      for (const key of keys) {
        const member = record[key]
        if (member === undefined) continue
        if (out.length > 1) out += ','
        out += `${jsonString(key)}:${canonicalize(member)}`
      }
      return `${out}}`
    }
    default:
      throw new CanonicalizationError(`JCS cannot represent a value of type ${typeof value}`)
  }
}
