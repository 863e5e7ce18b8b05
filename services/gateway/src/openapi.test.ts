import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Validator } from '@seriousme/openapi-schema-validator'
import { afterEach, describe, expect, it } from 'vitest'
import { makeTestGateway } from './app.testkit.js'
import { buildOpenApiDocument } from './openapi.js'

const here = path.dirname(fileURLToPath(import.meta.url))
let gw: Awaited<ReturnType<typeof makeTestGateway>> | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

/** Every endpoint of SPEC.md's endpoint table, as OpenAPI paths. */
const SPEC_ROUTES = [
  'get /v1/health',
  'post /v1/tx/build',
  'post /v1/tx/preflight',
  'post /v1/tx/approve-request',
  'post /v1/tx/sign-and-send',
  'get /v1/tx/{hash}',
  'get /v1/balance/{token}/{account}',
  'get /v1/approvals/pending',
  'post /v1/approvals/{requestId}/decide',
  'get /v1/approvals/history',
  'get /approval-ui',
  'post /v1/skills/register',
  'get /v1/skills',
  'get /v1/skills/{name}',
  'delete /v1/skills/{name}',
]

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(buildOpenApiDocument() as never)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })

  it('describes every SPEC route the gateway serves, and nothing it does not serve', async () => {
    const doc = buildOpenApiDocument()
    const described = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`))
    for (const r of SPEC_ROUTES) expect(described).toContain(r)
    gw = await makeTestGateway()
    for (const r of described) {
      const [method, p] = r.split(' ') as [string, string]
      expect(gw.app.hasRoute({ method: method.toUpperCase() as 'GET', url: p.replace(/\{(\w+)\}/g, ':$1') }), r).toBe(true)
    }
  })

  it('is served at GET /v1/openapi.json and checked in as docs/openapi.json, identical', async () => {
    gw = await makeTestGateway()
    const res = await gw.app.inject({ method: 'GET', url: '/v1/openapi.json' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual(buildOpenApiDocument())
    const checkedIn = JSON.parse(readFileSync(path.resolve(here, '../../../docs/openapi.json'), 'utf8'))
    expect(checkedIn, 'docs/openapi.json is stale: run npm run openapi').toEqual(buildOpenApiDocument())
  })

  it('uses the same schema objects the routes validate with', async () => {
    const { txIntentSchema, signAndSendBodySchema } = await import('@countersign/shared')
    const doc = buildOpenApiDocument()
    expect(doc.components.schemas.TxIntent).toBe(txIntentSchema)
    expect(doc.paths['/v1/tx/sign-and-send'].post.requestBody.content['application/json'].schema).toBe(signAndSendBodySchema)
  })
})
