import { addressSchema, amountSchema, chainIdSchema } from '../schemas/formats.js'
import { UNLIMITED_APPROVAL_RULES } from '../types.js'

const nullableAmount = { anyOf: [amountSchema, { type: 'null' }] } as const

/** The policy file: every field optional (defaults fill the rest), nothing unknown anywhere. */
export const policyFileSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // Written by clients that version their policy files; "1" is this format.
    version: { const: '1' },
    allowedChains: { type: 'array', uniqueItems: true, items: chainIdSchema },
    tokenAllowlist: { type: 'array', items: addressSchema },
    contractAllowlist: { type: 'array', items: addressSchema },
    recipientAllowlist: { type: 'array', items: addressSchema },
    maxValueWei: nullableAmount,
    maxGasCostWei: nullableAmount,
    maxApprovalAmount: nullableAmount,
    requireApprovalAbove: {
      type: 'object',
      additionalProperties: false,
      required: ['valueWei'],
      properties: { valueWei: amountSchema },
    },
    maxRiskScore: { type: 'number', minimum: 0, maximum: 100 },
    maxSwapSlippageBps: { type: 'integer', minimum: 0, maximum: 10000 },
    maxTxPerHour: { type: 'integer', minimum: 0 },
    tokenLimits: {
      type: 'object',
      patternProperties: {
        '^0x[0-9a-fA-F]{40}$': {
          type: 'object',
          additionalProperties: false,
          properties: {
            maxAmount: amountSchema,
            requireApprovalAbove: amountSchema,
            maxApprovalAmount: amountSchema,
          },
        },
      },
      additionalProperties: false,
    },
    unlimitedApprovals: { type: 'string', enum: UNLIMITED_APPROVAL_RULES },
    // DESIGN §6 "quorum": above these figures, `approvals` distinct named operators must approve.
    requireQuorumAbove: {
      type: 'object',
      additionalProperties: false,
      required: ['approvals'],
      properties: {
        valueWei: amountSchema,
        tokens: {
          type: 'object',
          patternProperties: { '^0x[0-9a-fA-F]{40}$': amountSchema },
          additionalProperties: false,
        },
        // One approval is the ordinary requireApprovalAbove; 100 is the most operators a file may list.
        approvals: { type: 'integer', minimum: 2, maximum: 100 },
      },
    },
  },
} as const
