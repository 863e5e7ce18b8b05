// RFC 8785 JSON Canonicalization Scheme. Our hashed inputs are plain JSON
// values (strings, finite numbers, booleans, null, arrays, objects); JCS then
// reduces to: ECMAScript number and string serialisation (what JSON.stringify
// does) and object members sorted by their UTF-16 code units (what the
// default Array.prototype.sort does).
//
// Written with plain loops: it runs three times for every build (the
// txRequestHash and two audit events) on the gateway's event loop.

export class CanonicalizationError extends Error {}

export function canonicalize(value: unknown): string {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false'
    case 'string':
      return JSON.stringify(value)
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalizationError('JCS cannot represent a non-finite number')
      return JSON.stringify(value)
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
        out += `${JSON.stringify(key)}:${canonicalize(member)}`
      }
      return `${out}}`
    }
    default:
      throw new CanonicalizationError(`JCS cannot represent a value of type ${typeof value}`)
  }
}
