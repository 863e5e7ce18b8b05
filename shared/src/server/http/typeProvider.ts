// fastify's type provider for countersign's schemas: a route whose body,
// params, querystring or response schema is a TypedSchema<T> (see
// ../schemas/typed.ts) gets T for req.body / req.params / req.query, and its
// reply payload is checked against the response schema's T. Types only: no
// run-time code, so nothing here loads fastify.
import type { FastifyPluginAsync, FastifyTypeProvider, RawServerDefault } from 'fastify'
import type { ValueOf } from '../../schemas/typed.js'

export interface SchemaTypeProvider extends FastifyTypeProvider {
  validator: ValueOf<this['schema']>
  serializer: ValueOf<this['schema']>
}

/** A route group (fastify plugin) whose routes are typed by their schemas. */
export type TypedRoutes<Options extends object = Record<never, never>> = FastifyPluginAsync<Options, RawServerDefault, SchemaTypeProvider>
