// The terminal channel around its prompt: an answer that could not be
// carried out is asked again while the request is still pending, and not
// once the request has ended. The prompt here answers "yes" at once and
// carries the answer out as the real one does (cliPrompt.test.ts covers the
// terminal itself).
import { describe, expect, it } from 'vitest'
import type { PendingRequest } from '../requests/pendingRequests.js'
import type { ChannelHost, DecideResult } from './channel.js'
import { DecisionNotCarriedOut, terminalChannel, type TerminalPrompt } from './terminalChannel.js'

const request = { requestId: 'r1' } as PendingRequest
const flush = () => new Promise((r) => setTimeout(r, 10))

function answeringYes(): { prompt: TerminalPrompt; asked: () => number } {
  let asked = 0
  const prompt: TerminalPrompt = async (_request, signal, carryOut) => {
    asked++
    if (signal.aborted) throw new Error('(decided elsewhere or expired)')
    try {
      await carryOut(true)
    } catch (err) {
      throw new DecisionNotCarriedOut(err)
    }
    return true
  }
  return { prompt, asked: () => asked }
}

describe('terminalChannel', () => {
  it('asks again when the decision could not be carried out and the request is pending again', async () => {
    const { prompt, asked } = answeringYes()
    const decisions: boolean[] = []
    let failures = 1
    const host: ChannelHost = {
      async decide(requestId, approved) {
        if (failures-- > 0) throw new Error('the signer could not issue a token (connect ENOENT); the request is still pending')
        decisions.push(approved)
        return { decided: true, requestId, approved } satisfies DecideResult
      },
    }
    terminalChannel(host, prompt).present(request)
    await flush()
    expect(asked()).toBe(2)
    expect(decisions).toEqual([true])
  })

  it('does not ask again once the request ended while its decision failed (expired, decided elsewhere)', async () => {
    const { prompt, asked } = answeringYes()
    let channel: ReturnType<typeof terminalChannel> | undefined = undefined
    const host: ChannelHost = {
      async decide(requestId) {
        // The service ends the request (its expiry sweep, the dashboard) and withdraws it from every channel.
        channel!.withdraw(requestId, 'expired')
        throw new Error(`approval request ${requestId} does not exist, has expired or was already decided`)
      },
    }
    channel = terminalChannel(host, prompt)
    channel.present(request)
    await flush()
    expect(asked()).toBe(1)
  })

  it('does not ask again after a timeout or a withdrawal', async () => {
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
