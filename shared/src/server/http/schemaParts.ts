// Small pieces for writing route schemas (request and response) the way both
// fastify and the OpenAPI document read them. A route's response schema is
// what fastify serialises with (fast-json-stringify): a property it does not
// list is dropped, so every field a client reads must be listed.

export const str = { type: 'string' } as const
export const strings = { type: 'array', items: str } as const
export const int = { type: 'integer' } as const
export const num = { type: 'number' } as const
export const bool = { type: 'boolean' } as const
export const nullableStr = { type: ['string', 'null'] } as const
export const nullableInt = { type: ['integer', 'null'] } as const
/** Any JSON value, passed through as is. */
export const anyValue = {} as const

/** A closed object; every property required unless `required` says otherwise. */
export const closed = <const P extends Record<string, object>, const R extends readonly (keyof P & string)[] = (keyof P & string)[]>(properties: P, required?: R) =>
  ({ type: 'object', additionalProperties: false, required: required ?? (Object.keys(properties) as (keyof P & string)[]), properties }) as const

/** A response of a route: its schema with the description the OpenAPI document shows (fastify-swagger's convention). */
export const described = <const S extends object>(description: string, schema: S) => ({ ...schema, description })

/** A response that is not JSON: content type and schema per fastify's `content` form. */
export const htmlResponse = (description: string) => ({ description, content: { 'text/html': { schema: str } } }) as const

/** A response with no body (the WebSocket upgrade). */
export const emptyResponse = (description: string) => ({ description }) as const

/** OpenAPI security requirements (the operatorToken bearer scheme); fastify ignores them. */
export type SecurityRequirements = ReadonlyArray<Readonly<Record<string, readonly string[]>>>
/** The route needs the operator token (its preHandler is requireOperator). */
export const operatorOnly: SecurityRequirements = [{ operatorToken: [] }]
/** The operator token, or nothing when the request authorises itself otherwise (a listed publisher's signature). */
export const operatorOrNone: SecurityRequirements = [{ operatorToken: [] }, {}]
