// RFC 8785 JSON Canonicalization Scheme. Our hashed inputs are plain JSON
// values (strings, finite numbers, booleans, null, arrays, objects); JCS then
// reduces to: ECMAScript number and string serialisation (what JSON.stringify
// does) and object members sorted by their UTF-16 code units (what the
// default Array.prototype.sort does).

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
      if (Array.isArray(value)) return `[${value.map((v) => canonicalize(v)).join(',')}]`
      const record = value as Record<string, unknown>
      const keys = Object.keys(record)
        .filter((k) => record[k] !== undefined)
        .sort()
      return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalize(record[k])}`).join(',')}}`
    }
    default:
      throw new CanonicalizationError(`JCS cannot represent a value of type ${typeof value}`)
  }
}
