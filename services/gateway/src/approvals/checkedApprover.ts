import { approvalTicketSchema, approvalUpdatesSchema, approverMethods, createAjv, describeValidationErrors } from '@countersign/shared'
import type { ApproverCaller } from './approvalWaiters.js'

/** The approver answered, but not in the shape the protocol says: treated like an approver that is not there. */
export class ApproverAnswerError extends Error {
  override name = 'ApproverAnswerError'
}

const ajv = createAjv()
const checks: Record<string, ReturnType<typeof ajv.compile>> = {
  [approverMethods.requestApproval]: ajv.compile(approvalTicketSchema),
  [approverMethods.approvalUpdates]: ajv.compile(approvalUpdatesSchema),
}

/**
 * The approver caller with the answers the gateway acts on checked first:
 * requestApproval's ticket and approvalUpdates' page. Anything else in them
 * would otherwise throw where it is read (a poll loop that nothing catches
 * would end the process).
 */
export function checkedApprover(approver: ApproverCaller): ApproverCaller {
  return {
    async call<T>(method: string, params: unknown, opts?: { timeoutMs?: number }): Promise<T> {
      const answer = await approver.call<T>(method, params, opts)
      const check = checks[method]
      if (check && !check(answer)) throw new ApproverAnswerError(`the approver answered ${method} with ${describeValidationErrors(check.errors, 'result')}`)
      return answer
    },
  }
}
