import {
  SERVICE_VERSION,
  balanceParamsSchema,
  balanceQuerySchema,
  policyFileSchema,
  signAndSendBodySchema,
  skillManifestSchema,
  txHashParamsSchema,
  txIntentSchema,
} from '@countersign/shared'

// The OpenAPI 3.1 description of the API, generated from the very schema
// objects the routes validate with, so the two cannot drift apart. Served at
// GET /v1/openapi.json and checked in as docs/openapi.json.

const obj = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ type: 'object', additionalProperties: false, required, properties })
const str = { type: 'string' }
const address = { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' }
const hash = { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' }
const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } })
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const err = (description: string, schema: unknown = ref('SimpleError')) => json(schema, description)

const schemas = {
  TxIntent: txIntentSchema,
  SkillManifest: skillManifestSchema,
  SkillError: { type: 'object', required: ['registered', 'name', 'manifestHash', 'error'], properties: { registered: { const: false }, name: { type: 'string' }, manifestHash: { type: 'string' }, error: { type: 'string' }, validationErrors: { type: 'array', items: { type: 'string' } }, hashMismatches: { type: 'array', items: { type: 'object', required: ['file', 'expected', 'actual'], properties: { file: { type: 'string' }, expected: { type: 'string' }, actual: { type: ['string', 'null'] } } } }, scanFindings: { type: 'array', items: { type: 'string' } } } },
  ValidationError: obj({ statusCode: { type: 'integer' }, error: str, message: str }),
  SimpleError: { type: 'object', required: ['error', 'message'], properties: { error: str, message: str } },
  PolicyFile: {
    ...policyFileSchema,
    description:
      'The policy file (SERVICE_POLICY_FILE), read by the gateway and the signer. recipientAllowlist, when non-empty, covers transfer recipients and approve spenders (a spender in contractAllowlist also passes). An approve amount counts against tokenLimits maxAmount and requireApprovalAbove like a transfer; an approve of 2^255 or more is unlimited and follows unlimitedApprovals (default require_approval). requireQuorumAbove {valueWei, tokens: {address: amount}, approvals: M (2-100)}: a native value or token amount (an approve\'s allowance included) above its figure always needs approval, by M distinct named operators (SERVICE_OPERATORS_FILE; the approver refuses to start without enough of them).',
  },
  QuorumState: {
    ...obj({ required: { type: 'integer' }, approvals: { type: 'integer' }, approvedBy: { type: 'array', items: str }, remaining: { type: 'integer' } }),
    description: 'The named operators\' approvals of a request above requireQuorumAbove: how many it needs, who approved (in vote order), how many more it needs',
  },
  PolicyError: {
    description:
      'Reason texts in rule order. Audit reason codes: chain_not_allowed, token_not_in_allowlist, contract_not_in_allowlist, recipient_not_in_allowlist (also for an approve spender), value_exceeds_max, approval_exceeds_max (also an approve above the token maxAmount), unlimited_approval_denied, rate_limit_exceeded, risk_score_too_high, deadline_passed; gas_cost_exceeds_max when estimated gas times max fee exceeds constraints.maxGasWei. Approval reasons: value_above_approval_threshold, token_amount_above_approval_threshold, unlimited_approval, quorum_required, simulation_unavailable.',
    type: 'object', required: ['error', 'reasons', 'policyVersion'], properties: { error: { const: 'policy_denied' }, decision: { const: 'deny' }, reasons: { type: 'array', items: str }, policyVersion: str } },
  PolicyDecision: obj({ decision: { enum: ['allow', 'deny', 'require_approval'] }, reasons: { type: 'array', items: str }, policyVersion: str }),
  TxRequest: obj({ to: address, data: { type: 'string', pattern: '^0x([0-9a-fA-F]{2})*$' }, value: str, chainId: { type: 'integer' }, type: { const: 'eip1559' } }),
  RiskFactor: obj({ id: str, weight: { type: 'number' }, detail: str }),
  BalanceDiff: obj({ token: address, change: { type: 'string', pattern: '^-?[0-9]+$' } }),
  AuditEvent: obj({ id: str, timestamp: { type: 'integer' }, intentId: str, event: str, data: { type: 'object' } }),
  ApprovalRequest: {
    type: 'object',
    required: ['requestId', 'summary', 'ttlSeconds'],
    properties: {
      requestId: str,
      ttlSeconds: { type: 'integer' },
      summary: {
        type: 'object',
        required: ['action', 'riskScore', 'warnings'],
        description: 'action uses the token contracts\' own symbol() and decimals() when the chain has an RPC; skill is set only for intents from the skill sandbox, clientSource is a client\'s own metadata.source; every string has control and bidi characters escaped (\\u202e)',
        properties: { action: str, riskScore: { type: 'number' }, warnings: { type: 'array', items: str }, skill: { type: ['string', 'null'] }, clientSource: { type: ['string', 'null'] }, tokenMismatches: { type: 'array', items: str } },
      },
      quorum: { ...ref('QuorumState'), description: 'Only on requests above the policy\'s requireQuorumAbove' },
      card: {
        type: 'object',
        description: 'The approval card as the dashboard and the terminals show it: title, tone (green/amber/red), alerts (red lines), lines {label, value, kind, tone?}, lists {title, items}, confirm',
        properties: { title: str, riskScore: { type: 'number' }, tone: { enum: ['green', 'amber', 'red'] }, alerts: { type: 'array', items: str }, confirm: { type: 'boolean' } },
      },
    },
  },
}

const intentBody = { required: true, content: { 'application/json': { schema: ref('TxIntent') } } }
const intentErrors = { '400': err('The body does not match the schema', ref('ValidationError')) }

export function buildOpenApiDocument() {
  return {
    openapi: '3.1.0',
    info: {
      title: 'countersign',
      version: SERVICE_VERSION,
      description: 'A signing service for AI agents: declarative intents in; policy, simulation, human approval and an isolated signer before anything is signed. Every response carries X-Service-Version.',
    },
    servers: [{ url: 'http://127.0.0.1:3100' }],
    components: {
      schemas,
      securitySchemes: { operatorToken: { type: 'http', scheme: 'bearer', description: 'DATA_DIR/operator-token, or SERVICE_OPERATOR_TOKEN' } },
    },
    paths: {
      '/v1/health': { get: { operationId: 'health', responses: { '200': json(obj({ status: { const: 'ok' }, version: str, uptime: { type: 'number' } }), 'Alive') } } },
      '/v1/openapi.json': { get: { operationId: 'openapi', responses: { '200': json({ type: 'object' }, 'This document') } } },
      '/v1/tx/build': {
        post: {
          operationId: 'build',
          requestBody: intentBody,
          responses: {
            '200': json(obj({ intentId: str, txRequestHash: hash, description: str, txRequest: ref('TxRequest') }), 'Built'),
            ...intentErrors,
            '403': err('Policy denied', ref('PolicyError')),
          },
        },
      },
      '/v1/tx/preflight': {
        post: {
          operationId: 'preflight',
          requestBody: intentBody,
          responses: {
            '200': json(
              {
                type: 'object',
                required: ['intentId', 'simulationSuccess', 'riskScore', 'gasEstimate', 'warnings', 'balanceDiffs'],
                properties: {
                  intentId: str,
                  simulationSuccess: { type: 'boolean' },
                  riskScore: { type: 'number', minimum: 0, maximum: 100 },
                  gasEstimate: str,
                  warnings: { type: 'array', items: str },
                  balanceDiffs: { type: 'array', items: ref('BalanceDiff') },
                  riskReasons: { type: 'array', items: str },
                  riskFactors: { type: 'array', items: ref('RiskFactor') },
                  revertReason: { type: ['string', 'null'] },
                  gasCost: {
                    description: 'Gas limit (as sign-and-send sets it) times the current max fee, against constraints.maxGasWei; a cost above it is also a warning, and approve-request refuses it (403) before any operator is asked',
                    oneOf: [obj({ gas: str, maxFeePerGas: str, costWei: str, maxGasWei: str, withinLimit: { type: 'boolean' } }), { type: 'null' }],
                  },
                },
              },
              'Simulated and scored (a reverting transaction is a 200 with simulationSuccess false)',
            ),
            ...intentErrors,
            '502': err('no_rpc_client or rpc_error'),
          },
        },
      },
      '/v1/tx/approve-request': {
        post: {
          operationId: 'approveRequest',
          description:
            'Blocks until an operator decides (web mode), up to 300 s. A client that disconnects does not withdraw the request: sending the same intent again attaches to it, or returns the decision made meanwhile (within the token lifetime). The token binds to txRequestHash and to keccak256(JCS(intent)). Before any operator is asked: 502 no_rpc_client for a chain without RPC, 403 policy_denied when the estimated gas cost at the current max fee already exceeds constraints.maxGasWei (the reason names both numbers).',
          requestBody: intentBody,
          responses: {
            '200': json(
              {
                type: 'object',
                required: ['intentId', 'approved', 'txRequestHash', 'description', 'riskScore', 'warnings'],
                properties: { intentId: str, approved: { const: true }, approvalRequired: { type: 'boolean' }, approvalTokenId: str, txRequestHash: hash, description: str, riskScore: { type: 'number' }, warnings: { type: 'array', items: str }, riskReasons: { type: 'array', items: str }, gasEstimate: { type: ['string', 'null'] }, policyDecision: ref('PolicyDecision') },
              },
              'Approved (or no approval needed)',
            ),
            ...intentErrors,
            '403': json({ oneOf: [ref('PolicyError'), obj({ intentId: str, txRequestHash: hash, policyDecision: ref('PolicyDecision'), approvalRequired: { const: true }, approved: { const: false }, reason: { enum: ['user_declined', 'approval_expired', 'withdrawn'] } })] }, 'Policy denied, or declined / expired'),
            '409': err('intent_conflict: this intent id already has an approval request (or decision) for a different body'),
            '429': err('too_many_pending: the wallet has 5 requests waiting, or 500 wait in all'),
            '502': err('no_rpc_client: no RPC is configured for the chain (nothing is pending)'),
            '503': err('approver_unavailable: the approver is not reachable, or it cannot gather the quorum of named operators the policy asks for (requireQuorumAbove; the message says how many it needs and has); nothing was approved'),
          },
        },
      },
      '/v1/tx/sign-and-send': {
        post: {
          operationId: 'signAndSend',
          description: 'Enforces what approve-request enforces: the risk ceiling (maxRiskScore, 403 policy_denied with the risk reason) and approval when nothing could be simulated, using the preflight of the same transaction from the last 120 s or running one.',
          requestBody: { required: true, content: { 'application/json': { schema: signAndSendBodySchema } } },
          responses: {
            '200': json(obj({ intentId: str, signedTx: str, txHash: hash, broadcast: { type: 'boolean' }, broadcastError: { type: ['string', 'null'] } }), 'Signed (and broadcast unless broadcast is false)'),
            '400': err('The body does not match the schema', ref('ValidationError')),
            '403': err('policy_denied, approval_required (with txRequestHash), invalid_approval_token or signing_failed'),
            '409': err('intent_conflict: the intent id was signed for another transaction'),
            '502': err('no_rpc_client or rpc_error'),
            '503': err('signer_unavailable: the signer is not reachable, or (message starting key_unavailable:) the wallet\'s key is on a PKCS#11 token the signer cannot reach now; or the signer did not answer in time (the signature may or may not exist). Retrying the same intent is always safe: signing is idempotent'),
          },
        },
      },
      '/v1/tx/{hash}': {
        get: {
          operationId: 'receipt',
          parameters: [{ name: 'hash', in: 'path', required: true, schema: txHashParamsSchema.properties.hash }, { name: 'chainId', in: 'query', required: false, schema: balanceQuerySchema.properties.chainId }],
          responses: {
            '200': json(
              obj({
                txHash: hash,
                status: { enum: ['success', 'reverted'] },
                blockNumber: { type: 'integer' },
                gasUsed: str,
                from: address,
                to: { type: ['string', 'null'] },
                chainId: { type: 'integer' },
                effectiveGasPrice: str,
                transactionHash: { ...hash, description: 'the same as txHash, under the JSON-RPC receipt name' },
                blockHash: hash,
                contractAddress: { type: ['string', 'null'], description: 'the contract a deployment created; null otherwise' },
              }),
              'Receipt',
            ),
            '400': err('Bad hash', ref('ValidationError')),
            '404': err('not_found: pending or unknown'),
            '502': err('no_rpc_client or rpc_error'),
          },
        },
      },
      '/v1/balance/{token}/{account}': {
        get: {
          operationId: 'balance',
          parameters: [
            { name: 'token', in: 'path', required: true, schema: balanceParamsSchema.properties.token },
            { name: 'account', in: 'path', required: true, schema: balanceParamsSchema.properties.account },
            {
              name: 'chainId',
              in: 'query',
              required: false,
              schema: balanceQuerySchema.properties.chainId,
              description: 'default: 8453 when configured, else the only configured chain (400 when several are and 8453 is not); the answer echoes it',
            },
          ],
          responses: {
            '200': json(obj({ token: address, account: address, balance: str, chainId: { type: 'integer' } }), 'Balance'),
            '400': err('Bad parameters', ref('ValidationError')),
            '502': err('no_rpc_client or rpc_error'),
          },
        },
      },
      '/v1/approvals/pending': { get: { operationId: 'pendingApprovals', responses: { '200': json(obj({ pending: { type: 'array', items: ref('ApprovalRequest') } }), 'Pending requests') } } },
      '/v1/approvals/{requestId}/decide': {
        post: {
          operationId: 'decide',
          security: [{ operatorToken: [] }],
          parameters: [{ name: 'requestId', in: 'path', required: true, schema: str }],
          requestBody: { required: true, content: { 'application/json': { schema: obj({ approved: { type: 'boolean' } }) } } },
          responses: {
            '200': json(
              obj({ decided: { type: 'boolean' }, requestId: str, approved: { type: 'boolean' }, operator: str, quorum: ref('QuorumState'), counted: { type: 'boolean' } }, ['decided', 'requestId', 'approved']),
              'Decided. On a request above requireQuorumAbove, an approval that does not complete the quorum answers decided false with the votes so far (the request stays pending; the same operator approving again counts once, counted false); any denial decides. operator: the named operator (SERVICE_OPERATORS_FILE) who decided.',
            ),
            '400': err('Bad body', ref('ValidationError')),
            '401': err('operator_auth_required'),
            '403': err('operator_required: a quorum request can only be approved by named operators (the approver\'s own terminal prompt may only deny it)'),
            '404': err('not_found: unknown, expired or already decided'),
          },
        },
      },
      '/v1/approvals/history': {
        get: {
          operationId: 'history',
          parameters: [{ name: 'limit', in: 'query', required: false, schema: { type: 'string' }, description: 'default 20, clamped to 1..100' }],
          responses: { '200': json(obj({ events: { type: 'array', items: ref('AuditEvent') } }), 'Audit events, newest first') },
        },
      },
      '/v1/approvals/webhooks': {
        get: {
          operationId: 'webhookDeliveries',
          description:
            'Webhook deliveries (SERVICE_WEBHOOK_URL), newest first: event id, type, intentId, status (pending, delivered, failed after 24 h of retries), attempts, next attempt, last error. Never the body or the secret. See docs/webhooks.md.',
          parameters: [{ name: 'limit', in: 'query', required: false, schema: { type: 'string' }, description: 'default 20, clamped to 1..100' }],
          responses: {
            '200': json(
              obj({
                configured: { type: 'boolean' },
                deliveries: {
                  type: 'array',
                  items: obj({
                    id: str,
                    type: { enum: ['approval_requested', 'approval_vote', 'approval_decided', 'approval_expired', 'tx_broadcast', 'broadcast_failed'] },
                    intentId: str,
                    status: { enum: ['pending', 'delivered', 'failed'] },
                    attempts: { type: 'integer' },
                    createdAt: { type: 'integer' },
                    nextAttemptAt: { type: ['integer', 'null'] },
                    lastError: { type: ['string', 'null'] },
                    deliveredAt: { type: ['integer', 'null'] },
                  }),
                },
              }),
              'Webhook deliveries',
            ),
          },
        },
      },
      '/v1/approvals/ws': {
        get: {
          operationId: 'approvalFeed',
          description:
            'WebSocket upgrade: the live approval feed. A browser Origin other than this service is refused (403). The first message must be {"type":"auth","token":"<operator token>"} within 5 s, else the socket closes with 4401; nothing is sent before it. Then: {type:"pending",pending}, {type:"history",events}, and {type:"request",request}, {type:"ended",requestId,end}, {type:"audit",events} as things change.',
          responses: { '101': { description: 'Switching protocols' }, '403': { description: 'Foreign Origin' }, '426': err('upgrade_required: a plain GET, not a WebSocket upgrade') },
        },
      },
      '/approval-ui': { get: { operationId: 'dashboard', responses: { '200': { description: 'The operator dashboard', content: { 'text/html': { schema: str } } } } } },
      '/v1/skills/register': {
        post: {
          operationId: 'registerSkill',
          description: 'Needs the operator token unless the manifest publisher is listed in SERVICE_SKILL_PUBLISHERS (then its signature is the authorisation).',
          security: [{ operatorToken: [] }, {}],
          requestBody: { required: true, content: { 'application/json': { schema: ref('SkillManifest') } } },
          responses: {
            '200': json(obj({ registered: { const: true }, name: str, manifestHash: hash }), 'Registered'),
            '400': err('schema_validation_failed, signature_verification_failed, symlink_refused or skill_folder_refused (with path), file_hash_mismatch, static_scan_failed, skill_has_no_entry, or undeclared_import (a file the entry can load is not in files: undeclaredFiles, importProblems)', ref('SkillError')),
            '401': err('operator_auth_required: no valid operator token and the publisher is not in SERVICE_SKILL_PUBLISHERS', ref('SkillError')),
            '409': err('duplicate_skill', ref('SkillError')),
            '503': err('approver_unavailable: the approver, which checks the operator token, is not reachable', ref('SkillError')),
          },
        },
      },
      '/v1/skills': { get: { operationId: 'listSkills', responses: { '200': json({ type: 'array', items: obj({ name: str, publisher: str, actions: { type: 'array', items: str }, chains: { type: 'array', items: { type: 'integer' } } }) }, 'Active skills') } } },
      '/v1/skills/{name}': {
        get: { operationId: 'getSkill', parameters: [{ name: 'name', in: 'path', required: true, schema: str }], responses: { '200': json({ type: 'object' }, 'The manifest without its signature'), '404': err('skill_not_found', obj({ error: { const: 'skill_not_found' }, name: str })) } },
        delete: {
          operationId: 'revokeSkill',
          security: [{ operatorToken: [] }],
          parameters: [{ name: 'name', in: 'path', required: true, schema: str }],
          responses: { '200': json(obj({ name: str, revoked: { const: true } }), 'Revoked'), '401': err('operator_auth_required'), '404': err('skill_not_found', obj({ error: { const: 'skill_not_found' }, name: str })), '503': err('approver_unavailable: the approver, which checks the operator token, is not reachable') },
        },
      },
      '/v1/skills/{name}/run': {
        post: {
          operationId: 'runSkill',
          description: 'Runs the skill in the sandbox; its intents go through policy and approval.',
          parameters: [{ name: 'name', in: 'path', required: true, schema: str }],
          requestBody: { required: false, content: { 'application/json': { schema: { type: 'object', properties: { input: {} } } } } },
          responses: {
            '200': json({ type: 'object', required: ['exitCode', 'output', 'durationMs'], properties: { exitCode: { type: ['integer', 'null'] }, output: {}, durationMs: { type: 'number' }, error: { enum: ['timeout', 'memory', 'crash'] }, stderr: str } }, 'Ran (error says why it stopped early)'),
            '400': err('symlink_refused or skill_folder_refused: the skill folder is (or now holds) a symlink or special file; body names the path'),
            '404': err('skill_not_found', obj({ error: { const: 'skill_not_found' }, name: str })),
            '409': err('skill_files_changed'),
            '429': err('too_many_runs: SERVICE_SKILL_CONCURRENCY runs are in progress'),
            '503': err('sandbox_unavailable: bubblewrap did not work at start; the message says what to install'),
          },
        },
      },
    },
  }
}
