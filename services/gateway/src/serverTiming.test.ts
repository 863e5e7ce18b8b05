import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { installServerTiming, startPhaseTimer } from './serverTiming.js'

describe('startPhaseTimer', () => {
  it('names each phase by the time since the previous mark, and ends with the total', () => {
    const times = [10, 10.5, 12.25, 20]
    const timer = startPhaseTimer(() => times.shift()!)
    timer.mark('build')
    timer.mark('audit-built')
    expect(timer.header()).toBe('build;dur=0.50, audit-built;dur=1.75, total;dur=10.00')
  })

  it('refuses a name that is not a header token', () => {
    const timer = startPhaseTimer()
    expect(() => timer.mark('chain reads')).toThrow('lower-case tokens')
    expect(() => timer.mark('a,b')).toThrow(RangeError)
  })
})

describe('installServerTiming', () => {
  async function appWith(enabled: boolean) {
    const app = Fastify()
    installServerTiming(app, enabled)
    app.get('/work', async (req) => {
      req.phases?.mark('first')
      req.phases?.mark('second')
      return { ok: true }
    })
    app.get('/fails', async () => {
      throw new Error('boom')
    })
    return app
  }

  it('on: every response carries the marked phases and a total', async () => {
    const app = await appWith(true)
    const res = await app.inject('/work')
    expect(res.json()).toEqual({ ok: true })
    expect(res.headers['server-timing']).toMatch(/^first;dur=\d+\.\d\d, second;dur=\d+\.\d\d, total;dur=\d+\.\d\d$/)
    const failed = await app.inject('/fails')
    expect(failed.statusCode).toBe(500)
    expect(failed.headers['server-timing']).toMatch(/^total;dur=\d+\.\d\d$/)
    await app.close()
  })

  it('off (the default): no header, and routes see no timer', async () => {
    const app = await appWith(false)
    const res = await app.inject('/work')
    expect(res.json()).toEqual({ ok: true })
    expect(res.headers['server-timing']).toBeUndefined()
    await app.close()
  })
})
