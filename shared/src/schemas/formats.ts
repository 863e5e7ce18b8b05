// Reusable JSON Schema fragments for the formats of SPEC "Formats".

export const addressSchema = { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' } as const
export const txHashSchema = { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' } as const
/** Decimal digits in the smallest unit, no sign, no leading zeros; the uint256 range is the builders' check. */
export const amountSchema = { type: 'string', pattern: '^(0|[1-9][0-9]{0,77})$' } as const
/** format "uuid" is the canonical lower-case text (CANONICAL_UUID in validation.ts, which createAjv registers). */
export const uuidSchema = { type: 'string', format: 'uuid', description: 'a UUID in lower case: 8-4-4-4-12 hex digits' } as const
export const chainIdSchema = { type: 'integer', enum: [1, 10, 42161, 8453] } as const
export const hexDataSchema = { type: 'string', pattern: '^0x([0-9a-fA-F]{2})*$' } as const

/** The longest calldata (hex characters with the 0x) a transaction request may carry: 32 KiB of data. */
export const MAX_TX_DATA_HEX = 65536

/** An unsigned transaction as builders produce it (SPEC "Build result" txRequest). */
export const txRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['to', 'data', 'value', 'chainId', 'type'],
  properties: {
    to: addressSchema,
    data: { ...hexDataSchema, maxLength: MAX_TX_DATA_HEX },
    value: amountSchema,
    chainId: chainIdSchema,
    type: { const: 'eip1559' },
  },
} as const
