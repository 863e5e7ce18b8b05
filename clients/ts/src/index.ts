// @countersign/client: a typed client for the countersign API.
export * from './client.js'
export * from './errors.js'
export * from './intents.js'
export * from './approveAndSend.js'
export * from './signAndSendSettled.js'
export type {
  Action,
  ActionType,
  Address,
  Asset,
  AuditEvent,
  ChainId,
  Hex,
  SwapProvider,
  TxIntent,
  TxRequest,
  ApprovalResult,
  Balance,
  BuildResult,
  DecideQuorum,
  DecideResult,
  HealthResult,
  HistoryResult,
  IntentTransaction,
  PendingApproval,
  PendingList,
  PreflightResult,
  Receipt,
  SignAndSendResult,
  SkillListEntry,
  SkillRegistered,
  SkillRevoked,
  SkillRunResult,
} from '@countersign/shared'
export { NATIVE_TOKEN_ADDRESS, APPROVAL_REQUEST_TTL_MS } from '@countersign/shared/constants'
