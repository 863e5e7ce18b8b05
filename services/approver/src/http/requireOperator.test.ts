import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { installErrorHandling } from '@countersign/shared/http/errors'
import type { Operators } from '../operators/operators.js'
import { requireOperator } from './requireOperator.js'

const alice: Operators = { identify: (t) => (t === 'alice-token' ? { name: 'alice' } : null), named: 1 }

async function appWith(operators: Operators | null) {
  const app = Fastify()
  installErrorHandling(app)
  app.decorateRequest('operator', null)
  app.post('/op', { preHandler: requireOperator(operators, 'deciding') }, async (req) => ({ operator: req.operator }))
  return app
}

describe('requireOperator (approver)', () => {
  it('401 in the simple error shape without a token or with a wrong one; the handler never runs', async () => {
    const app = await appWith(alice)
    for (const headers of [{}, { authorization: 'Bearer bob-token' }, { authorization: 'alice-token' }]) {
      const r = await app.inject({ method: 'POST', url: '/op', headers })
      expect(r.statusCode).toBe(401)
      expect(r.json()).toEqual({ error: 'operator_auth_required', message: expect.stringContaining('deciding needs the operator token') })
    }
  })

  it('names the operator for the handler; with auth off anyone passes, unnamed', async () => {
    expect((await (await appWith(alice)).inject({ method: 'POST', url: '/op', headers: { authorization: 'Bearer alice-token' } })).json()).toEqual({ operator: { name: 'alice' } })
    expect((await (await appWith(null)).inject({ method: 'POST', url: '/op' })).json()).toEqual({ operator: { name: null } })
  })

  it('a token of the wrong shape is told so; a wrong token of the right shape is not', async () => {
    const app = await appWith(alice)
    const short = await app.inject({ method: 'POST', url: '/op', headers: { authorization: 'Bearer bob-token' } })
    expect(short.json().message).toMatch(/; operator tokens are 32 to 1024 printable characters without spaces, and this one is not$/)
    const long = await app.inject({ method: 'POST', url: '/op', headers: { authorization: `Bearer ${'b'.repeat(40)}` } })
    expect(long.json().message).toBe('deciding needs the operator token: Authorization: Bearer <token> (DATA_DIR/operator-token)')
  })
})
