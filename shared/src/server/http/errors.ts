// HTTP error handling shared by the gateway and the approver. Only types come
// from fastify, so the signer, which loads shared/, never loads fastify.
import type { FastifyError, FastifyInstance } from 'fastify'
import { BuildError } from '../../builders/errors.js'
import { describeValidationErrors } from '../../validation.js'
import { httpErrorBody, simpleErrorBody, validationErrorBody } from './errorBodies.js'
import { responseHeaders } from './responseHeaders.js'

/**
 * An error whose body a route chose (SPEC "Simple error" and friends). Thrown
 * from anywhere below a route; the handler sends it as is.
 */
export class HttpError<Body extends { error: string; message?: string } = { error: string; message?: string }> extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: Body,
  ) {
    super(body.message ?? body.error)
  }
}

/**
 * Error bodies of SPEC "Errors": validation failures are exactly
 * {statusCode, error, message}; anything a client could not have caused is a
 * 500 {error: "internal_error", message} without internals (and is a bug).
 * Registered on the root instance, so it also covers 404s and every plugin.
 */
/** 404 for a method and URL no route serves (also written on refused WebSocket upgrades). */
export const routeNotFoundBody = (method: string | undefined, url: string | undefined) =>
  simpleErrorBody('not_found', `route ${method ?? ''} ${(url ?? '').split('?')[0]} does not exist`)

export function installErrorHandling(app: FastifyInstance): void {
  app.addHook('onRequest', (_req, reply, done) => {
    reply.headers(responseHeaders)
    done()
  })

  app.setSchemaErrorFormatter((errors, dataVar) => new Error(describeValidationErrors(errors, dataVar)))

  app.setNotFoundHandler((req, reply) => {
    reply
      .headers(responseHeaders)
      .code(404)
      .send(routeNotFoundBody(req.method, req.url))
  })

  app.setErrorHandler((err: FastifyError, req, reply) => {
    reply.headers(responseHeaders)
    if (err.validation) {
      return reply.code(400).send(validationErrorBody(err.message))
    }
    if ((err as unknown) instanceof HttpError) {
      const e = err as unknown as HttpError
      return reply.code(e.statusCode).send(e.body)
    }
    // A builder rejects what a schema cannot express (a router of another
    // chain, an amount beyond uint256): a client mistake, so a 400 in the
    // validation shape.
    if ((err as unknown) instanceof BuildError) {
      return reply.code(400).send(validationErrorBody(err.message))
    }
    const status = err.statusCode ?? 500
    if (status >= 400 && status < 500) {
      return reply.code(status).send(httpErrorBody(status, describeClientError(err)))
    }
    req.log.error({ err }, 'unhandled error')
    return reply.code(500).send(simpleErrorBody('internal_error', 'internal error; see the service log'))
  })
}

/** The message for an error fastify raised over what the client sent (its body, mostly), without fastify's own wording. */
export function describeClientError(err: FastifyError): string {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'body is not valid JSON'
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'body is empty; send a JSON object'
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'content type not supported; send application/json'
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'body is larger than the limit'
    default:
      return err.message
  }
}
