import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Validator } from '@seriousme/openapi-schema-validator'
import { afterEach, describe, expect, it } from 'vitest'
import { makeTestGateway } from './app.testkit.js'
import type { RouteOptions } from 'fastify'
import { txIntentSchema } from '@countersign/shared'
import { responseChecker } from '../../../test/support/contract.js'
import { buildOpenApiDocument, documentedRoutes } from './openapi.js'
import { txIntentInputSchema } from './routes/intentInput.js'

const here = path.dirname(fileURLToPath(import.meta.url))
let gw: Awaited<ReturnType<typeof makeTestGateway>> | undefined
let gw2: Awaited<ReturnType<typeof makeTestGateway>> | undefined
afterEach(async () => {
  await gw?.close()
  await gw2?.close()
  gw = gw2 = undefined
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

  it('is made of the very schema objects the routes are registered with, request and response', async () => {
    const registered = new Map<string, RouteOptions['schema']>()
    gw = await makeTestGateway({ onRoute: (r) => void [r.method].flat().forEach((m) => registered.set(`${m.toLowerCase()} ${r.url}`, r.schema)) })
    for (const { method, path: p, schema } of documentedRoutes) {
      expect(registered.get(`${method} ${p.replace(/\{(\w+)\}/g, ':$1')}`), `${method} ${p}`).toBe(schema)
    }
    // And every route the gateway serves is documented (HEAD is fastify's automatic twin of GET).
    const documented = new Set(documentedRoutes.map((r) => `${r.method} ${r.path.replace(/\{(\w+)\}/g, ':$1')}`))
    expect([...registered.keys()].filter((k) => !k.startsWith('head ') && !documented.has(k))).toEqual([])
    // An operator-only route of the gateway has the requireOperator preHandler; the forwarded decide is checked by the approver's own.
    const guarded = new Set<string>()
    gw2 = await makeTestGateway({ onRoute: (r) => void (r.preHandler ? [r.method].flat().forEach((m) => guarded.add(`${m.toLowerCase()} ${r.url}`)) : undefined) })
    const operatorOnly = documentedRoutes.filter((r) => JSON.stringify(r.schema.security) === JSON.stringify([{ operatorToken: [] }])).map((r) => `${r.method} ${r.path.replace(/\{(\w+)\}/g, ':$1')}`)
    expect(operatorOnly.sort()).toEqual(['delete /v1/skills/:name', 'post /v1/approvals/:requestId/decide'])
    expect([...guarded]).toEqual(['delete /v1/skills/:name'])
    // Every response a route declares is in the document, and besides them only
    // what the HTTP layer answers before a route runs: 403 (the Host guard) on
    // every route, 414 where there is a path parameter, 413 and 415 where there is a body.
    const doc = buildOpenApiDocument()
    for (const { method, path: p, schema } of documentedRoutes) {
      const operation = (doc.paths[p] as Record<string, { responses: Record<string, { description: string }> }>)[method]!
      const beforeTheRoute = ['403', ...(schema.params ? ['414'] : []), ...(schema.body ? ['413', '415'] : [])]
      expect(Object.keys(operation.responses).sort(), `${method} ${p}`).toEqual([...new Set([...Object.keys(schema.response), ...beforeTheRoute])].sort())
    }
  })

  it('documents the Host guard\'s 403 host_not_allowed on every route, in a schema its body matches (found by review: undocumented)', async () => {
    const doc = buildOpenApiDocument()
    expect(doc.info.description).toContain('403 host_not_allowed')
    const contract = responseChecker(doc as unknown as Parameters<typeof responseChecker>[0])
    gw = await makeTestGateway()
    for (const { method, path: p } of documentedRoutes) {
      const url = p.replace('{hash}', `0x${'ab'.repeat(32)}`).replace(/\{(\w+)\}/g, 'x')
      const res = await gw.app.inject({ method: method.toUpperCase() as 'GET', url, headers: { host: 'evil.example' }, ...(method === 'post' ? { payload: {} } : {}) })
      expect(res.statusCode, `${method} ${p}`).toBe(403)
      expect(res.json(), `${method} ${p}`).toMatchObject({ error: 'host_not_allowed' })
      contract.check(method, p, { status: res.statusCode, body: res.json(), contentType: res.headers['content-type'] as string })
    }
  })

  it('shows the TxIntent and the error bodies by reference, as the routes use them', () => {
    const doc = buildOpenApiDocument()
    // The TxIntent the routes take: the shared schema but for an id in either case (found by review: upper case was a 400).
    expect(doc.components.schemas.TxIntent).toEqual(txIntentInputSchema)
    expect(doc.components.schemas.TxIntent).toEqual({ ...txIntentSchema, properties: { ...txIntentSchema.properties, id: expect.objectContaining({ pattern: expect.stringContaining('[0-9a-fA-F]{8}') }) } })
    const build = doc.paths['/v1/tx/build']!.post!
    expect(build.requestBody?.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TxIntent' })
    expect(build.responses['403']).toEqual({
      description: expect.stringMatching(/^Policy denied; or host_not_allowed: /),
      content: { 'application/json': { schema: { anyOf: [{ $ref: '#/components/schemas/PolicyError' }, { $ref: '#/components/schemas/SimpleError' }] } } },
    })
    expect(doc.components.schemas.PolicyError).toMatchObject({ required: ['error', 'decision', 'reasons', 'policyVersion'] })
    const send = doc.paths['/v1/tx/sign-and-send']!.post!
    expect(send.requestBody?.content['application/json'].schema).toMatchObject({ properties: { intent: { $ref: '#/components/schemas/TxIntent' } } })
    // Operator-only routes say so.
    expect(doc.paths['/v1/skills/{name}']!.delete!.security).toEqual([{ operatorToken: [] }])
    expect(doc.paths['/v1/approvals/{requestId}/decide']!.post!.security).toEqual([{ operatorToken: [] }])
  })
})
