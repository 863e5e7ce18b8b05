// The ceiling for the build benchmark: fastify with one POST route that parses
// the same JSON body and answers a small object. Nothing the service does
// (validation, policy, SQLite, audit) happens here.
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.post('/bare', async (/** @type {import('fastify').FastifyRequest<{ Body: { id?: unknown } | null }>} */ req) => ({ intentId: req.body?.id ?? null, ok: true }))
app.get('/ready', async () => ({ ok: true }))
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) })
process.on('SIGTERM', () => app.close().then(() => process.exit(0)))
