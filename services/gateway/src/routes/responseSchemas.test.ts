import { describe, expect, it } from 'vitest'
import { approvalRequiredBody, policyDeniedBody } from '@countersign/shared/http/errorBodies'
import { throughResponseSchema } from '@countersign/shared/testing/serialise'
import { approveRequestRouteSchema } from './approveRequest.js'
import { preflightRouteSchema } from './preflight.js'
import { signAndSendRouteSchema } from './signAndSend.js'
import { registerSkillRouteSchema, runSkillRouteSchema } from './skills.js'

// The gateway serialises with its response schemas: a field they do not list
// never reaches a client. Each value below has every field the handlers send.

const hash = '0x' + 'ab'.repeat(32)
const policyDecision = { decision: 'require_approval', reasons: ['value above the approval threshold'], policyVersion: '1' }
const riskFactors = [{ id: 'first_time_recipient', weight: 15, detail: 'first payment to 0xb0b' }]

describe('gateway response schemas drop nothing the handlers send', () => {
  it('preflight: the whole report, with and without a gas cost', async () => {
    const report = {
      intentId: 'i-1',
      simulationSuccess: false,
      riskScore: 40,
      gasEstimate: '21000',
      warnings: ['w'],
      balanceDiffs: [{ token: '0xeeee', change: '-1' }],
      riskReasons: ['first payment to 0xb0b'],
      riskFactors,
      signals: [{ id: 'first_time_recipient', message: 'first payment' }],
      revertReason: 'ERC20: transfer amount exceeds balance',
      allowanceChanges: [{ token: '0xt', spender: '0xs', before: '0', after: '5' }],
      simulationMethod: 'eth_simulateV1',
      gasCost: { gas: '21000', maxFeePerGas: '2', l1FeeWei: '7', costWei: '42007', maxGasWei: '100', withinLimit: false },
      tokenFacts: [{ address: '0xt', symbol: 'TUSD', decimals: 6 }, { address: '0xu', symbol: null, decimals: null }],
    }
    expect(await throughResponseSchema(preflightRouteSchema.response, 200, report)).toEqual(report)
    const bare = { ...report, revertReason: null, gasCost: null, simulationMethod: 'eth_call' }
    expect(await throughResponseSchema(preflightRouteSchema.response, 200, bare)).toEqual(bare)
  })

  it('approve-request: approved with a token, allowed without one, policy_denied, and the decline body', async () => {
    const result = { intentId: 'i-1', txRequestHash: hash, description: 'Send 1 ETH', riskScore: 40, warnings: [], riskReasons: ['r'], riskFactors, gasEstimate: null, policyDecision }
    const approved = { ...result, approved: true, approvalRequired: true, approvalTokenId: 't-1' }
    expect(await throughResponseSchema(approveRequestRouteSchema.response, 200, approved)).toEqual(approved)
    const allowed = { ...result, gasEstimate: '21000', approved: true, approvalRequired: false }
    expect(await throughResponseSchema(approveRequestRouteSchema.response, 200, allowed)).toEqual(allowed)
    const denied = policyDeniedBody(['value exceeds max'])
    expect(await throughResponseSchema(approveRequestRouteSchema.response, 403, denied)).toEqual(denied)
    const declined = { intentId: 'i-1', txRequestHash: hash, policyDecision, approvalRequired: true, approved: false, reason: 'user_declined' }
    expect(await throughResponseSchema(approveRequestRouteSchema.response, 403, declined)).toEqual(declined)
  })

  it('sign-and-send: the sign result, and every 403 body', async () => {
    const signed = { intentId: 'i-1', signedTx: '0x02f8', txHash: hash, broadcast: false, broadcastError: 'nonce too low' }
    expect(await throughResponseSchema(signAndSendRouteSchema.response, 200, signed)).toEqual(signed)
    for (const body of [policyDeniedBody(['risk score 25 exceeds the maximum of 20']), approvalRequiredBody('needs a token', hash), { error: 'invalid_approval_token', message: 'consumed' }]) {
      expect(await throughResponseSchema(signAndSendRouteSchema.response, 403, body)).toEqual(body)
    }
  })

  it('skills: every register error field, and a run that stopped early', async () => {
    const failed = {
      registered: false,
      name: 'x',
      manifestHash: '',
      error: 'undeclared_import',
      message: 'index.js loads lib/a.js',
      validationErrors: ['files: a is listed more than once'],
      hashMismatches: [{ file: 'a.js', expected: 'ab', actual: null }],
      scanFindings: ['index.js:1: eval'],
      path: 'skills/x',
      undeclaredFiles: ['lib/a.js'],
      importProblems: [{ from: 'index.js', specifier: './lib/a.js', file: 'lib/a.js', message: 'not declared' }],
    }
    expect(await throughResponseSchema(registerSkillRouteSchema.response, 400, failed)).toEqual(failed)
    const ran = { exitCode: null, output: { nested: [1, 'two', null] }, durationMs: 1200, error: 'timeout', stderr: 'killed' }
    expect(await throughResponseSchema(runSkillRouteSchema.response, 200, ran)).toEqual(ran)
    const changed = { error: 'skill_files_changed', message: 'register it again', hashMismatches: [{ file: 'a.js', expected: 'ab', actual: 'cd' }] }
    expect(await throughResponseSchema(runSkillRouteSchema.response, 409, changed)).toEqual(changed)
  })
})
