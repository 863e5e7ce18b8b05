// The terminal channel around its prompt: what an answer's carrying out
// ends in, and whether the request is asked again. The prompt here answers
// "yes" at once and hands on what carryOut gives, as the real one does
// (cliPrompt.test.ts covers the terminal itself; test/approver.system.test.ts
// the signer down in cli mode).
import { describe, expect, it } from 'vitest'
import { AuditWriteError } from '@countersign/shared'
import type { PendingRequest } from '../requests/pendingRequests.js'
import type { ChannelHost } from './channel.js'
import { DecisionNotCarriedOut, terminalChannel, type TerminalPrompt } from './terminalChannel.js'

const request = { requestId: 'r1' } as PendingRequest
const flush = () => new Promise((r) => setTimeout(r, 10))
const failure = (code: string, message: string) => Object.assign(new Error(message), { code })

/** A prompt answering yes; records what each answer came to. */
function answeringYes(): { prompt: TerminalPrompt; outcomes: string[] } {
  const outcomes: string[] = []
  const prompt: TerminalPrompt = async (_request, signal, carryOut) => {
    if (signal.aborted) throw new Error('(decided elsewhere or expired)')
    try {
      const note = await carryOut(true)
      outcomes.push(`approved${note ? ` (${note})` : ''}`)
      return true
    } catch (err) {
      outcomes.push(err instanceof DecisionNotCarriedOut ? `${err.message}${err.askAgain ? ' [again]' : ''}` : String(err))
      throw err
    }
  }
  return { prompt, outcomes }
}

describe('terminalChannel', () => {
  it('asks again when the decision could not be carried out and the request is pending again (the signer was down)', async () => {
    const { prompt, outcomes } = answeringYes()
    let failures = 1
    const host: ChannelHost = {
      async decide(requestId, approved) {
        if (failures-- > 0) throw failure('signer_unavailable', 'the signer could not issue a token (connect ENOENT); the request is still pending')
        return { decided: true, requestId, approved }
      },
    }
    terminalChannel(host, prompt).present(request)
    await flush()
    expect(outcomes).toEqual(['not carried out: the signer could not issue a token (connect ENOENT); the request is still pending [again]', 'approved'])
  })

  it('does not ask again a request that ended before its decision (expired, decided elsewhere), though no withdrawal came first', async () => {
    const { prompt, outcomes } = answeringYes()
    const host: ChannelHost = {
      async decide(requestId) {
        throw failure('not_found', `approval request ${requestId} does not exist, has expired or was already decided`)
      },
    }
    terminalChannel(host, prompt).present(request)
    await flush()
    expect(outcomes).toEqual(['not carried out: approval request r1 does not exist, has expired or was already decided'])
  })

  it('says an approval whose audit rows were committed, but not known durable, was recorded (it holds), and does not ask again', async () => {
    const { prompt, outcomes } = answeringYes()
    const host: ChannelHost = {
      async decide() {
        throw new AuditWriteError('audit log fsync failed (2 events of unknown durability): EIO', 'EIO', true)
      },
    }
    terminalChannel(host, prompt).present(request)
    await flush()
    expect(outcomes).toEqual(['approved (recorded, but audit log fsync failed (2 events of unknown durability): EIO)'])
  })

  it('does not ask again after a timeout', async () => {
    let asked = 0
    const prompt: TerminalPrompt = async () => {
      asked++
      throw new Error('no answer in time; the request stays pending on the dashboard')
    }
    terminalChannel({ decide: async () => ({ decided: true, requestId: 'r1', approved: true }) }, prompt).present(request)
    await flush()
    expect(asked).toBe(1)
  })
})
