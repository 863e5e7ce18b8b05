// What the gateway's HTTP API accepts as a UUID, and so as an intent and a
// sign-and-send body. RFC 4122 UUIDs are case-insensitive on input (Swift's
// uuidString and macOS uuidgen write upper case): an upper-case intent id or
// approvalTokenId was a 400 (found by review). The routes take either case
// and turn it into the canonical lower-case text at once (normalizeIntent,
// canonicalUuid), before anything hashes, reserves, rate-limits, audits or
// forwards it. The shared schemas stay canonical-only: the signer and the
// approver's socket validate with them, and the gateway sends them canonical ids.
import { signAndSendBodySchema, txIntentSchema, typedSchema, type SignAndSendBody, type TxIntent, type TypedSchema } from '@countersign/shared'

/** A typed schema as a plain object to spread: its type-level marker would go along, and outside shared/ it has no name a declaration can use. */
const plain = <S extends TypedSchema<unknown>>(schema: S): Omit<S, keyof TypedSchema<unknown>> => schema

/** A UUID in either case; no urn:uuid: prefix, no braces (another spelling of one UUID is not read as it). */
export const uuidInputSchema = {
  type: 'string',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'a UUID: 8-4-4-4-12 hex digits, in either case; the service uses it, and answers with it, in lower case',
} as const

/** SPEC "TxIntent" as the routes take it: the shared schema with an id in either case. */
export const txIntentInputSchema = typedSchema<TxIntent>()({
  ...plain(txIntentSchema),
  properties: { ...txIntentSchema.properties, id: uuidInputSchema },
})

/** POST /v1/tx/sign-and-send's body: the intent and the token, each UUID in either case. */
export const signAndSendInputSchema = typedSchema<SignAndSendBody>()({
  ...plain(signAndSendBodySchema),
  properties: { intent: txIntentInputSchema, approvalTokenId: uuidInputSchema },
})
