import { ACTION_SPECS, ACTION_TYPES } from '../actions/index.js'
import type { Address, Hex, TxIntent } from '../types.js'
import { addressSchema, amountSchema, chainIdSchema, txHashSchema, uuidSchema } from './formats.js'
import { typedSchema } from './typed.js'

/**
 * The action is a tagged union on `type`. ajv's `discriminator` picks the one
 * branch by its tag, so an error names the real problem inside that branch
 * instead of "must match exactly one schema" for all five.
 */
export const actionSchema = {
  type: 'object',
  discriminator: { propertyName: 'type' },
  required: ['type'],
  properties: { type: { type: 'string', enum: ACTION_TYPES } },
  oneOf: ACTION_TYPES.map((t) => ACTION_SPECS[t].schema),
} as const

export const txIntentSchema = typedSchema<TxIntent>()({
  type: 'object',
  additionalProperties: false,
  required: ['version', 'id', 'timestamp', 'chain', 'wallet', 'action', 'constraints'],
  properties: {
    version: { const: '1' },
    id: uuidSchema,
    timestamp: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    chain: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'chainId'],
      properties: {
        type: { const: 'evm' },
        chainId: chainIdSchema,
        rpcHint: { type: 'string', maxLength: 512 },
      },
    },
    wallet: {
      type: 'object',
      additionalProperties: false,
      required: ['address'],
      properties: { address: addressSchema, profile: { type: 'string', maxLength: 64 } },
    },
    action: actionSchema,
    constraints: {
      type: 'object',
      additionalProperties: false,
      required: ['maxGasWei', 'deadline', 'maxSlippageBps'],
      properties: {
        maxGasWei: amountSchema,
        deadline: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
        maxSlippageBps: { type: 'integer', minimum: 0, maximum: 10000 },
      },
    },
    metadata: {
      type: 'object',
      additionalProperties: false,
      properties: {
        source: { type: 'string', maxLength: 128 },
        note: { type: 'string', maxLength: 1024 },
      },
    },
    preferences: {
      type: 'object',
      additionalProperties: false,
      properties: {
        speed: { type: 'string', enum: ['slow', 'normal', 'fast'] },
        privateRelay: { type: 'boolean' },
      },
    },
  },
})

/** POST /v1/tx/sign-and-send: the intent and, when policy requires approval, the token approve-request issued. */
export interface SignAndSendBody {
  intent: TxIntent
  approvalTokenId?: string
}

export const signAndSendBodySchema = typedSchema<SignAndSendBody>()({
  type: 'object',
  additionalProperties: false,
  required: ['intent'],
  properties: { intent: txIntentSchema, approvalTokenId: uuidSchema },
})

export const txHashParamsSchema = typedSchema<{ hash: Hex }>()({
  type: 'object',
  additionalProperties: false,
  required: ['hash'],
  properties: { hash: txHashSchema },
})

export const balanceParamsSchema = typedSchema<{ token: Address; account: Address }>()({
  type: 'object',
  additionalProperties: false,
  required: ['token', 'account'],
  properties: { token: addressSchema, account: addressSchema },
})

const chainIdQuery = { type: 'string', pattern: '^[0-9]{1,10}$' } as const

export const balanceQuerySchema = typedSchema<{ chainId?: string }>()({
  type: 'object',
  additionalProperties: false,
  properties: {
    chainId: {
      ...chainIdQuery,
      description: 'default: 8453 when configured, else the only configured chain (400 when several are and 8453 is not); the answer echoes it',
    },
  },
})

export const txReceiptQuerySchema = typedSchema<{ chainId?: string }>()({
  type: 'object',
  additionalProperties: false,
  properties: { chainId: { ...chainIdQuery, description: 'the chain to look on; default: every configured chain' } },
})
