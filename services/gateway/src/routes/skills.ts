import { createAjv, listValidationErrors, skillManifestSchema, typedSchema, type AuditLog, type Clock, type TxIntent } from '@countersign/shared'
import { simpleErrorBody, simpleErrorSchema, skillNotFoundBody, skillNotFoundSchema, validationErrorSchema } from '@countersign/shared/http/errorBodies'
import { anyValue, closed, described, int, nullableInt, nullableStr, num, operatorOnly, operatorOrNone, str, strings } from '@countersign/shared/http/schemaParts'
import { describeClientError } from '@countersign/shared/http/errors'
import { UnreadableJsonBodyError } from '@countersign/shared/http/strictJson'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'
import type { FastifyError, FastifyReply } from 'fastify'
import { requireOperator, type OperatorAuthority, type OperatorCheck } from '../operatorAuthority.js'
import { manifestHash, signatureMatchesPublisher, withoutSignature, type SkillManifest } from '../skills/manifest.js'
import type { SkillRecord, SkillRegistry } from '../skills/registry.js'
import { resolveImports } from '../skills/resolveImports.js'
import { openSkillApiSocket } from '../skills/sandbox/apiSocket.js'
import type { SandboxStatus } from '../skills/sandbox/probe.js'
import { createRunRoot } from '../skills/sandbox/runRoot.js'
import { resultOf, runSandboxed } from '../skills/sandbox/runSkill.js'
import type { FileReport, ScanFile } from '../skills/scan/pool.js'
import { checkSkillFiles, entryOf, inspectSkillFolder, isRefusal, type FileCheck } from '../skills/skillFiles.js'

/**
 * The register route's body limit, above the gateway's 64 KiB: a manifest
 * the schema accepts (256 files with paths of up to 512 characters) can be
 * ~150 KB, and was refused with a 413 outside the register error shape
 * (found by review). Larger is 400 schema_validation_failed.
 */
export const MAX_MANIFEST_BODY_BYTES = 256 * 1024

export interface SkillRouteOptions {
  audit: AuditLog
  registry: SkillRegistry
  skillsDir: string
  /** Static analysis of the skill's files (off the event loop): findings reject; module requests feed the import resolver. */
  analyse: (files: ScanFile[]) => Promise<FileReport[]>
  /** Checks a presented operator token (the approver decides). */
  operator: OperatorAuthority
  /** SERVICE_SKILL_PUBLISHERS, lower-cased: their signature alone authorises a registration. */
  publishers: ReadonlySet<string>
  clock: Clock
  /** DATA_DIR/run: where per-run API sockets and private skill roots are created. */
  runDir: string
  /** SERVICE_SKILL_CONCURRENCY: runs at once; 429 too_many_runs beyond. */
  concurrency: number
  /** The start-up sandbox probe's answer; runs answer 503 sandbox_unavailable when it failed. */
  sandbox: SandboxStatus
  /** Sends a skill's intent through approve-request; `signal` aborts when the skill is gone. */
  submitIntent: (intent: TxIntent, signal: AbortSignal) => Promise<{ status: number; body: unknown }>
}

const runBodySchema = typedSchema<{ input?: unknown }>()({
  type: 'object',
  additionalProperties: false,
  properties: { input: { description: 'passed to the skill\'s run(input); null when absent' } },
})

const nameSchema = typedSchema<{ name: string }>()({
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 128 } },
})

/** SPEC "Skill register error bodies": {registered false, name, manifestHash '', error} and what the failing step adds. */
const skillErrorSchema = closed(
  {
    registered: { const: false },
    name: str,
    manifestHash: str,
    error: str,
    message: str,
    validationErrors: strings,
    hashMismatches: { type: 'array', items: closed({ file: str, expected: str, actual: nullableStr }) },
    scanFindings: strings,
    path: str,
    undeclaredFiles: strings,
    importProblems: { type: 'array', items: closed({ from: str, specifier: str, file: nullableStr, message: str }) },
  },
  ['registered', 'name', 'manifestHash', 'error'],
)

const approverUnavailable = 'approver_unavailable: the approver, which checks the operator token, is not reachable'

export const registerSkillRouteSchema = {
  operationId: 'registerSkill',
  description: 'Needs the operator token unless the manifest publisher is listed in SERVICE_SKILL_PUBLISHERS (then its signature is the authorisation). A body that is not a SkillManifest is a 400 schema_validation_failed in the skill error body, listing every error.',
  security: operatorOrNone,
  // Validated by fastify with attachValidation (the failure is reported by the handler, in the skill error body, with every error listed).
  body: skillManifestSchema,
  response: {
    200: described('Registered', closed({ registered: { const: true }, name: str, manifestHash: str })),
    400: described(
      'schema_validation_failed, signature_verification_failed, symlink_refused or skill_folder_refused (with path), skill_too_large (path: the declared file over the per-file limit, or the one that takes all files over the per-skill limit; message names the limit; it is not read), file_hash_mismatch, static_scan_failed, skill_has_no_entry, or undeclared_import (a file the entry can load is not in files: undeclaredFiles, importProblems)',
      skillErrorSchema,
    ),
    401: described('operator_auth_required: no valid operator token, and the publisher is not in SERVICE_SKILL_PUBLISHERS or an operator revoked the skill name or its manifest', skillErrorSchema),
    409: described('duplicate_skill', skillErrorSchema),
    503: described(approverUnavailable, skillErrorSchema),
  },
}

export const listSkillsRouteSchema = {
  operationId: 'listSkills',
  response: { 200: described('Active skills', { type: 'array', items: closed({ name: str, publisher: str, actions: strings, chains: { type: 'array', items: int } }) }) },
}

const { signature: _signature, ...unsignedProperties } = skillManifestSchema.properties

export const getSkillRouteSchema = {
  operationId: 'getSkill',
  params: nameSchema,
  response: {
    200: described('The manifest without its signature', closed(unsignedProperties, ['version', 'name', 'publisher', 'permissions', 'sandbox', 'files'])),
    400: validationErrorSchema,
    404: described('skill_not_found (also for a revoked skill)', skillNotFoundSchema),
  },
}

export const revokeSkillRouteSchema = {
  operationId: 'revokeSkill',
  security: operatorOnly,
  params: nameSchema,
  response: {
    200: described('Revoked', closed({ name: str, revoked: { const: true } })),
    400: validationErrorSchema,
    401: described('operator_auth_required', simpleErrorSchema),
    404: described('skill_not_found', skillNotFoundSchema),
    503: described(approverUnavailable, simpleErrorSchema),
  },
}

export const runSkillRouteSchema = {
  operationId: 'runSkill',
  description: 'Runs the skill in the sandbox; its intents go through policy and approval.',
  params: nameSchema,
  body: runBodySchema,
  response: {
    200: described(
      'Ran (error says why it stopped early)',
      closed(
        { exitCode: nullableInt, output: { ...anyValue, description: "the skill's result" }, durationMs: num, error: { enum: ['timeout', 'memory', 'tasks', 'crash'] }, stderr: str },
        ['exitCode', 'durationMs'],
      ),
    ),
    400: described(
      'Bad body or name; or symlink_refused / skill_folder_refused: the skill folder is (or now holds) a symlink or special file; body names the path',
      { anyOf: [validationErrorSchema, closed({ error: str, path: str, message: str })] },
    ),
    404: described('skill_not_found', skillNotFoundSchema),
    409: described(
      'skill_files_changed (with hashMismatches) or skill_has_no_entry',
      closed({ error: str, message: str, hashMismatches: { type: 'array', items: closed({ file: str, expected: str, actual: nullableStr }) } }, ['error', 'message']),
    ),
    429: described('too_many_runs: SERVICE_SKILL_CONCURRENCY runs are in progress', simpleErrorSchema),
    503: described('sandbox_unavailable: bubblewrap did not work at start; the message says what to install', simpleErrorSchema),
  },
}

/** The name a failed registration is reported under: the body's own, when it has one. */
function claimedName(body: unknown): string {
  const name = typeof body === 'object' && body !== null ? (body as { name?: unknown }).name : undefined
  return typeof name === 'string' ? name.slice(0, 128) : ''
}

/** 409 skill_files_changed. Registered files were within the size limits, so one over them now has changed too (not read, actual null). */
function filesChangedBody(name: string, declared: ReadonlyArray<{ path: string; sha256: string }>, files: FileCheck) {
  const grown = declared.filter((f) => f.path === files.tooLarge?.path).map((f) => ({ file: f.path, expected: f.sha256, actual: null }))
  return {
    error: 'skill_files_changed',
    message: `the files of ${name} no longer match its manifest; register it again${files.tooLarge ? `. ${files.tooLarge.message}` : ''}`,
    hashMismatches: [...files.mismatches, ...grown],
  }
}

export const skillRoutes: TypedRoutes<SkillRouteOptions> = async (app, opts) => {
  const validate = createAjv({ allErrors: true }).compile<SkillManifest>(skillManifestSchema)
  const { audit, registry } = opts
  app.decorateRequest('operatorGrant', null)

  /**
   * A body fastify could not parse (empty, not JSON, not UTF-8, a __proto__
   * member, a member given twice) never reaches the handler: it fails step 1 like any
   * other body that is not a manifest, in the skill error body the 400
   * schema promises. Other errors go on to the app's handler. (A member
   * given twice went on, and its validation-shaped body failed the route's
   * 400 schema: a 500 naming fastify's serializer, found by review.)
   */
  const unparsedBody = async (err: FastifyError, _req: unknown, reply: FastifyReply) => {
    // Its bytes not UTF-8, a prototype member, a member twice: strictJson's refusals, as fastify's own below.
    const unreadable = (err as unknown) instanceof UnreadableJsonBodyError ? (err as unknown as UnreadableJsonBodyError) : null
    const tooLarge = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
    if (!unreadable && !tooLarge && (err.statusCode !== 400 || !err.code?.startsWith('FST_ERR_CTP_'))) throw err
    const reason = unreadable ? unreadable.reason : tooLarge ? `the manifest is larger than ${MAX_MANIFEST_BODY_BYTES} bytes` : describeClientError(err)
    await audit.append({ intentId: 'system', event: 'skill_registration_failed', data: { skillName: '', reason: 'schema_validation_failed' } })
    return reply.code(400).send({ registered: false, name: '', manifestHash: '', error: 'schema_validation_failed', validationErrors: [reason] })
  }

  /**
   * Who authorises a registration: a publisher listed in SERVICE_SKILL_PUBLISHERS by its signature (checked
   * next), else the operator token. A name an operator revoked needs the token again, listed publisher or
   * not, until an operator has registered it again: the signature of the revoked manifest stays valid, and
   * anyone holding it re-registered the skill without a credential (found by review); so could anyone with
   * another manifest the publisher signed for that name and those files (found by the review of that fix).
   */
  async function authorise(manifest: SkillManifest, hash: string, authorization: string | undefined): Promise<OperatorCheck | { ok: true; grant: 'listed_publisher' }> {
    const listed = opts.publishers.has(manifest.publisher.address.toLowerCase())
    if (listed && !registry.wasRevoked(hash) && !registry.nameRevoked(manifest.name)) return { ok: true, grant: 'listed_publisher' }
    const what = listed
      ? `registering ${manifest.name} again after an operator revoked it (manifest ${hash})`
      : `registering a skill whose publisher ${manifest.publisher.address} is not in SERVICE_SKILL_PUBLISHERS`
    return opts.operator.check(authorization, what)
  }

  app.post('/v1/skills/register', { schema: registerSkillRouteSchema, attachValidation: true, errorHandler: unparsedBody, bodyLimit: MAX_MANIFEST_BODY_BYTES }, async (req, reply) => {
    const body = req.body
    const name = claimedName(body)
    const fail = async (status: 400 | 401 | 409 | 503, error: string, extra: Record<string, unknown> = {}, hash = '') => {
      await audit.append({ intentId: 'system', event: 'skill_registration_failed', data: { skillName: name, reason: error } })
      return reply.code(status).send({ registered: false, name, manifestHash: hash, error, ...extra })
    }
    // 1. schema
    if (!validate(body)) return fail(400, 'schema_validation_failed', { validationErrors: listValidationErrors(validate.errors) })
    const manifest = body
    // Authority. The manifest hash (step 3) comes first: who may register a manifest an operator revoked depends on it.
    const unsigned = withoutSignature(manifest)
    const hash = manifestHash(unsigned)
    const authority = await authorise(manifest, hash, req.headers.authorization)
    if (!authority.ok) return fail(authority.status, authority.error, { message: authority.message })
    const authorisedBy = authority.grant
    // 2. signature
    if (!(await signatureMatchesPublisher(manifest))) return fail(400, 'signature_verification_failed', { message: `the signature does not recover ${manifest.publisher.address}` })
    const duplicates = manifest.files.map((f) => f.path).filter((p, i, all) => all.indexOf(p) !== i)
    if (duplicates.length > 0) return fail(400, 'schema_validation_failed', { validationErrors: duplicates.map((p) => `files: ${p} is listed more than once`) })
    // 4. the folder (a real directory, no symlink anywhere), then file hashes
    const folder = await inspectSkillFolder(opts.skillsDir, manifest.name)
    if (isRefusal(folder)) return fail(400, folder.error, { path: folder.path, message: folder.message })
    const files = await checkSkillFiles(folder, manifest.files)
    if (files.tooLarge) return fail(400, 'skill_too_large', { path: files.tooLarge.path, message: files.tooLarge.message })
    if (files.refused.length > 0 || files.mismatches.length > 0) {
      return fail(400, 'file_hash_mismatch', {
        hashMismatches: [...files.refused.map((file) => ({ file, expected: manifest.files.find((f) => f.path === file)!.sha256, actual: null })), ...files.mismatches],
        ...(files.refused.length ? { message: `not read (absolute, '..' or not a plain relative path): ${files.refused.join(', ')}` } : {}),
      })
    }
    // 5. static analysis of every declared file, then everything the entry can load must be declared.
    // Every verified file is within the scan's size limit, and all of them within MAX_SKILL_BYTES: decoding them is bounded.
    const sources = files.verified.map((f) => ({ path: f.path, source: f.bytes.toString('utf8') }))
    const reports = await opts.analyse(sources)
    const findings = reports.flatMap((r) => r.findings)
    if (findings.length > 0) return fail(400, 'static_scan_failed', { scanFindings: findings })
    const entry = entryOf(manifest.files)
    if (entry === undefined) return fail(400, 'skill_has_no_entry', { message: `${manifest.name} declares no files; its entry (index.js) must be one of them` })
    const imports = resolveImports({
      entry,
      declared: new Map(sources.map((f) => [f.path, f.source])),
      requests: new Map(reports.map((r) => [r.path, r.requests])),
      tree: folder.tree,
    })
    if (imports.problems.length > 0) {
      return fail(400, 'undeclared_import', {
        message: imports.problems.map((p) => p.message).join('; '),
        undeclaredFiles: [...new Set(imports.problems.flatMap((p) => (p.file !== null && !manifest.files.some((f) => f.path === p.file) ? [p.file] : [])))],
        importProblems: imports.problems,
      })
    }
    // 6. duplicate name, then store
    const added = registry.add({ name: manifest.name, manifest: unsigned, manifestHash: hash, publisherAddress: manifest.publisher.address, registeredAt: opts.clock() })
    if (!added) return fail(409, 'duplicate_skill', { message: `an active skill is already registered as ${manifest.name}` })
    await audit.append({ intentId: 'system', event: 'skill_registered', data: { skillName: manifest.name, manifestHash: hash, publisherAddress: manifest.publisher.address, authorisedBy } })
    return { registered: true, name: manifest.name, manifestHash: hash }
  })

  app.get('/v1/skills', { schema: listSkillsRouteSchema }, async () =>
    registry.list().map((s) => ({ name: s.name, publisher: s.manifest.publisher.name, actions: s.manifest.permissions.actions, chains: s.manifest.permissions.chains })),
  )

  app.get('/v1/skills/:name', { schema: getSkillRouteSchema }, async (req, reply) => {
    const { name } = req.params
    const skill = registry.active(name)
    if (!skill) return reply.code(404).send(skillNotFoundBody(name))
    return skill.manifest
  })

  app.delete('/v1/skills/:name', { schema: revokeSkillRouteSchema, preHandler: requireOperator(opts.operator, 'revoking a skill') }, async (req, reply) => {
    const { name } = req.params
    if (!registry.revoke(name, opts.clock())) return reply.code(404).send(skillNotFoundBody(name))
    await audit.append({ intentId: 'system', event: 'skill_revoked', data: { skillName: name, authorisedBy: req.operatorGrant } })
    return { name, revoked: true }
  })

  // Runs in progress; each holds one sandbox (up to its manifest's memory).
  let running = 0

  app.post('/v1/skills/:name/run', { schema: runSkillRouteSchema }, async (req, reply) => {
    const { name } = req.params
    if (!opts.sandbox.available) return reply.code(503).send(simpleErrorBody('sandbox_unavailable', opts.sandbox.message))
    const skill = registry.active(name)
    if (!skill) return reply.code(404).send(skillNotFoundBody(name))
    if (running >= opts.concurrency) {
      return reply.code(429).send(simpleErrorBody('too_many_runs', `${running} skill runs are in progress, the most SERVICE_SKILL_CONCURRENCY allows; try again when one has finished`))
    }
    running++
    try {
      const outcome = await runSkill(name, skill, req.body?.input ?? null)
      return reply.code(outcome.status).send(outcome.body)
    } finally {
      running--
    }
  })

  /** Checks the folder and files again, copies them into a private root and runs the sandbox there. */
  async function runSkill(name: string, skill: SkillRecord, input: unknown): Promise<{ status: 200 | 400 | 409; body: unknown }> {
    const failed = (error: string, detail?: string) =>
      audit.append({ intentId: 'system', event: 'sandbox_error', data: { skillName: name, error, ...(detail ? { detail } : {}) } })
    // The folder must still be a real directory without links, and the files the ones that were registered and scanned.
    const folder = await inspectSkillFolder(opts.skillsDir, name)
    if (isRefusal(folder)) {
      await failed('crash', folder.message)
      return { status: 400, body: { error: folder.error, path: folder.path, message: folder.message } }
    }
    const files = await checkSkillFiles(folder, skill.manifest.files)
    if (files.tooLarge || files.refused.length > 0 || files.mismatches.length > 0) {
      await failed('crash', 'skill files changed since registration')
      return { status: 409, body: filesChangedBody(name, skill.manifest.files, files) }
    }
    const entry = entryOf(skill.manifest.files)
    if (!entry) return { status: 409, body: { error: 'skill_has_no_entry', message: `${name} declares no files` } }
    // The sandbox sees a private copy of exactly the bytes just checked.
    const root = await createRunRoot(opts.runDir, files.verified)
    // Refusals recorded while the skill runs; the answer waits for them (durable before the response), and
    // one that fails fails the run's answer instead of being an unhandled rejection.
    const forbidden: Array<Promise<unknown>> = []
    try {
      const api = await openSkillApiSocket({
        runDir: opts.runDir,
        skill,
        submit: opts.submitIntent,
        onForbidden: (reason) => {
          const recorded = failed('forbidden_action', reason)
          recorded.catch(() => undefined)
          forbidden.push(recorded)
        },
      })
      let result
      try {
        result = await runSandboxed({
          skillRoot: root.dir,
          entry,
          input,
          apiSocket: api.socketPath,
          limits: { ...skill.manifest.sandbox, filesystem: skill.manifest.permissions.filesystem },
        })
      } finally {
        await api.close()
      }
      await Promise.all(forbidden)
      if (result.error) await failed(result.error, result.stderr.split('\n').filter(Boolean).slice(-3).join(' | ').slice(0, 500))
      return {
        status: 200,
        body: {
          exitCode: result.exitCode,
          output: resultOf(result.output),
          durationMs: result.durationMs,
          ...(result.error ? { error: result.error, stderr: result.stderr.slice(-2000) } : {}),
        },
      }
    } finally {
      await root.remove()
    }
  }
}
