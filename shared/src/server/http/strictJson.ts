import type { FastifyInstance } from 'fastify'
import { duplicateJsonKey } from '../../config/duplicateKeys.js'
import { validationErrorBody } from './errorBodies.js'
import { HttpError } from './errors.js'

/** A body with a member given twice in one object: refused as a body that cannot be read as one value. */
export class DuplicateJsonMemberError extends HttpError {
  constructor(readonly member: string) {
    super(400, validationErrorBody(`${member} is given twice in one object; send each member once`))
  }
}

/**
 * application/json bodies parsed as fastify does by default (the same
 * poisoning rules and errors), and refused with 400 in the validation shape
 * when an object has a member twice ("amount":"1","amount":"999" is a
 * transfer of 999 to JSON.parse, of 1 to whatever keeps the first). No other
 * media type is read: fastify's text/plain parser is removed too.
 */
export function installStrictJson(app: FastifyInstance): void {
  // A text/plain body reached the route as a string and was refused with 400 "body must be object", where every
  // other non-JSON type gets the 415 the OpenAPI document promises (found by review).
  app.removeContentTypeParser('text/plain')
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    // Bodies are read as sent: a compressed one was parsed as text (400 "not valid JSON"), and the header
    // was ignored on a plain one (found by review). 415 names it.
    const encoding = req.headers['content-encoding']
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      return done(Object.assign(new Error(`content encoding ${JSON.stringify(encoding.slice(0, 40))} not supported; send the body uncompressed`), { statusCode: 415 }), undefined)
    }
    parse(req, body as string, (err: Error | null, value?: unknown) => {
      if (err) return done(err, undefined)
      // JSON.parse kept the last of two same-named members; a proxy or log in front may have read the first.
      const twice = duplicateJsonKey(body as string, 'body')
      if (twice !== null) return done(new DuplicateJsonMemberError(twice), undefined)
      done(null, value)
    })
  })
}
