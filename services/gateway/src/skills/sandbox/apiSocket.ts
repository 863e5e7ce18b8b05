import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import {
  RpcError,
  RPC_INVALID_PARAMS,
  SKILL_INTENT_REFUSED,
  canonicalUuid,
  createAjv,
  createRpcServer,
  describeValidationErrors,
  type RpcServer,
  type TxIntent,
} from '@countersign/shared'
import { txIntentInputSchema } from '../../routes/intentInput.js'
import type { UnsignedManifest } from '../manifest.js'

/** What a skill's submitIntent does once the intent passed the manifest's permissions. */
export type SubmitIntent = (intent: TxIntent, signal: AbortSignal) => Promise<{ status: number; body: unknown }>

export class ForbiddenAction extends Error {}

/**
 * The skill's only way out: a Unix socket served by the gateway for one run,
 * bound into the sandbox. It accepts TxIntents whose action type and chain the
 * manifest declared, stamps them with the skill's name (metadata.source), and
 * hands them to the normal pipeline — policy and approval apply as for any
 * agent. A refused intent is reported to `onForbidden` (audited as
 * sandbox_error forbidden_action).
 */
export async function openSkillApiSocket(opts: {
  runDir: string
  skill: { name: string; manifest: UnsignedManifest }
  submit: SubmitIntent
  onForbidden: (reason: string) => void
}): Promise<{ socketPath: string; close(): Promise<void> }> {
  const dir = path.join(opts.runDir, 'skills')
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const socketPath = path.join(dir, `${randomUUID().slice(0, 8)}.sock`)
  // The intent as the HTTP routes take it: an id in either case, made canonical before it is handed on.
  const validate = createAjv().compile<TxIntent>(txIntentInputSchema)
  const { permissions } = opts.skill.manifest
  const server: RpcServer = createRpcServer({
    socketPath,
    maxConnections: 8,
    methods: {
      async submitIntent(params, ctx) {
        const intent = (params as { intent?: unknown }).intent
        if (!validate(intent)) throw new RpcError(RPC_INVALID_PARAMS, describeValidationErrors(validate.errors, 'intent'))
        if (!permissions.actions.includes(intent.action.type)) {
          const reason = `skill ${opts.skill.name} may not submit ${intent.action.type} (its manifest allows ${permissions.actions.join(', ') || 'nothing'})`
          opts.onForbidden(reason)
          throw new RpcError(SKILL_INTENT_REFUSED, reason, { reason: 'forbidden_action' })
        }
        if (!permissions.chains.includes(intent.chain.chainId)) {
          const reason = `skill ${opts.skill.name} may not submit on chain ${intent.chain.chainId} (its manifest allows ${permissions.chains.join(', ') || 'none'})`
          opts.onForbidden(reason)
          throw new RpcError(SKILL_INTENT_REFUSED, reason, { reason: 'forbidden_action' })
        }
        const stamped: TxIntent = { ...intent, id: canonicalUuid(intent.id), metadata: { ...intent.metadata, source: `skill:${opts.skill.name}` } }
        return opts.submit(stamped, ctx.signal)
      },
    },
  })
  await server.listen()
  // The sandbox runs as another (mapped) user: the socket must be connectable from inside it.
  return { socketPath, close: () => server.close() }
}
