import { ACTION_TYPES } from '../actions/index.js'
import { addressSchema, chainIdSchema } from './formats.js'


export const skillManifestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'name', 'publisher', 'permissions', 'sandbox', 'files', 'signature'],
  properties: {
    version: { const: '1' },
    name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' },
    publisher: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'address', 'contact'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 128 },
        address: addressSchema,
        contact: { type: 'string', format: 'email', maxLength: 254 },
      },
    },
    permissions: {
      type: 'object',
      additionalProperties: false,
      required: ['actions', 'chains', 'network', 'filesystem'],
      properties: {
        actions: { type: 'array', uniqueItems: true, items: { type: 'string', enum: ACTION_TYPES } },
        chains: { type: 'array', uniqueItems: true, items: chainIdSchema },
        network: { type: 'boolean' },
        filesystem: { type: 'boolean' },
      },
    },
    sandbox: {
      type: 'object',
      additionalProperties: false,
      required: ['memoryMb', 'timeoutMs', 'allowSpawn'],
      properties: {
        memoryMb: { type: 'number', minimum: 1, maximum: 512 },
        timeoutMs: { type: 'number', minimum: 1000, maximum: 60000 },
        allowSpawn: { type: 'boolean' },
      },
    },
    files: {
      type: 'array',
      maxItems: 256,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['path', 'sha256'],
        properties: {
          path: { type: 'string', minLength: 1, maxLength: 512 },
          sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
        },
      },
    },
    signature: { type: 'string', pattern: '^0x[0-9a-fA-F]{130}$' },
  },
} as const
