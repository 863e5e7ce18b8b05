import type { Address } from './types.js'

export const SERVICE_VERSION = '0.1.0'
export const POLICY_VERSION = '1' as const

/** Pseudo token address that stands for the chain's native currency. */
export const NATIVE_TOKEN_ADDRESS: Address = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'

export const APPROVAL_REQUEST_TTL_MS = 300_000
export const APPROVAL_TOKEN_TTL_MS = 300_000
export const RATE_LIMIT_WINDOW_MS = 3_600_000
