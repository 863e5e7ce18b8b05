// A JSON Schema that also carries, at the type level only, the TypeScript
// type of the values it accepts. fastify's type provider
// (../http/typeProvider.ts) reads it, so a route handler's req.body, params
// and query get their types from the very schema the route validates with.
//
// Why not infer the type from the schema (json-schema-to-ts): the action
// schema is assembled from the action registry (ACTION_TYPES.map), which a
// type-level parser cannot follow; it parses the whole TxIntent to `never`.
// The wire types in ../types.ts are the hand-kept twin of these schemas.

declare const valueType: unique symbol

/** Type-level only: no such property exists at run time. */
export interface TypedSchema<T> {
  readonly [valueType]?: T
}

/** The type a TypedSchema accepts; unknown for a schema without one. */
export type ValueOf<S> = S extends { readonly [valueType]?: infer T } ? (unknown extends T ? unknown : T) : unknown

/** Attaches the type T to a schema object (returns the same object). */
export const typedSchema =
  <T>() =>
  <const S extends object>(schema: S): S & TypedSchema<T> =>
    schema
