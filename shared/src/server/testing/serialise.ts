// Sends a value through fastify's serialiser for one response schema, as a
// route with that schema would: what a client would receive. Tests use it to
// show that a response schema drops nothing a handler sends.
import Fastify from 'fastify'

export async function throughResponseSchema(response: Record<number, object>, status: number, value: unknown): Promise<unknown> {
  const app = Fastify()
  app.get('/', { schema: { response } }, async (_req, reply) => reply.code(status as 200).send(value))
  try {
    const res = await app.inject({ method: 'GET', url: '/' })
    if (res.statusCode !== status) throw new Error(`answered ${res.statusCode}: ${res.body}`)
    return res.json()
  } finally {
    await app.close()
  }
}
