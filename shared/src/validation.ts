import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'

// ajv-formats ships CommonJS with a default export; under NodeNext the callable
// sits on .default.
const addFormats = (addFormatsModule as unknown as { default: typeof addFormatsModule }).default ?? addFormatsModule

/**
 * "uuid" here is a UUID in its canonical text: 8-4-4-4-12 lower-case hex
 * digits, as crypto.randomUUID and most libraries write it. ajv-formats'
 * "uuid" also takes upper case and a "urn:uuid:" prefix; ids are compared as
 * strings (gateway.db, the signer, reservations), so another spelling of one
 * UUID was another intent, and a retry or a lookup with it was told nothing
 * had been signed (found by review).
 */
export const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * A UUID in its canonical text, from either case. RFC 4122 UUIDs are
 * case-insensitive on input (Swift's uuidString and macOS uuidgen write upper
 * case): the gateway accepts both on its HTTP API and turns them into this
 * before anything compares, hashes, stores or forwards them (found by review:
 * an upper-case id was a 400). Behind the gateway (the signer, the approver's
 * socket) only the canonical text is accepted, as before.
 */
export const canonicalUuid = (uuid: string): string => uuid.toLowerCase()

/**
 * The one ajv configuration every process validates with: strict schemas, no
 * coercion, no silent removal of unknown properties, all errors collected.
 */
export function createAjv(opts: { allErrors?: boolean } = {}): Ajv {
  const ajv = new Ajv({
    strict: true,
    // One error is enough for a 400 message; skill registration lists them all.
    allErrors: opts.allErrors ?? false,
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: false,
    allowUnionTypes: true,
    discriminator: true,
  })
  ;(addFormats as unknown as (a: Ajv, f: string[]) => void)(ajv, ['email'])
  ajv.addFormat('uuid', CANONICAL_UUID)
  return ajv
}

/** Turns ajv errors into one message naming the failing path, e.g. "body/action/to must match pattern ...". */
export function describeValidationErrors(errors: ErrorObject[] | null | undefined, root = 'body'): string {
  if (!errors || errors.length === 0) return `${root} is invalid`
  return errors.map((e) => describeOne(e, root)).join(', ')
}

function describeOne(e: ErrorObject, root: string): string {
  const path = `${root}${e.instancePath}`
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty
    return `${path} must NOT have additional property '${extra}'`
  }
  return `${path} ${e.message ?? 'is invalid'}`
}

/** Validation errors as a list, one string per failing path (skill registration reports all). */
export function listValidationErrors(errors: ErrorObject[] | null | undefined, root = 'manifest'): string[] {
  return (errors ?? []).map((e) => describeOne(e, root))
}

export type Validator<T> = ValidateFunction<T>
