import { isUtf8 } from 'node:buffer'
import type { FastifyInstance } from 'fastify'
import { duplicateJsonKey } from '../../config/duplicateKeys.js'
import { validationErrorBody } from './errorBodies.js'
import { HttpError } from './errors.js'

/**
 * A body refused before any route runs for what its bytes say, beyond
 * fastify's own parse errors: 400 in the validation shape. A route with a
 * 400 body of its own (skill registration) answers `reason` in it.
 */
export class UnreadableJsonBodyError extends HttpError {
  constructor(readonly reason: string) {
    super(400, validationErrorBody(reason))
  }
}

/** A body with a member given twice in one object: refused as a body that cannot be read as one value. */
export class DuplicateJsonMemberError extends UnreadableJsonBodyError {
  constructor(readonly member: string) {
    super(`${member} is given twice in one object; send each member once`)
  }
}

/** A body that JSON.parse reads but the default parser refuses: a member that could poison prototypes. */
const PROTOTYPE_MEMBER = 'body has a member named "__proto__", or a "constructor" holding "prototype", which is refused: read into a plain object it could change what other code finds there'

/**
 * application/json bodies parsed as fastify does by default (the same
 * poisoning rules and errors), and refused with 400 in the validation shape
 * when an object has a member twice ("amount":"1","amount":"999" is a
 * transfer of 999 to JSON.parse, of 1 to whatever keeps the first), when the
 * bytes are not UTF-8, or (naming it) when a member could poison prototypes.
 * A charset parameter changes nothing (RFC 8259 §11 defines none: JSON is
 * UTF-8, and a body in UTF-16 is not valid UTF-8 JSON). No other media type
 * is read: fastify's text/plain parser is removed too.
 */
export function installStrictJson(app: FastifyInstance): void {
  // A text/plain body reached the route as a string and was refused with 400 "body must be object", where every
  // other non-JSON type gets the 415 the OpenAPI document promises (found by review).
  app.removeContentTypeParser('text/plain')
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, raw, done) => {
    // Bodies are read as sent: a compressed one was parsed as text (400 "not valid JSON"), and the header
    // was ignored on a plain one (found by review). 415 names it.
    const encoding = req.headers['content-encoding']
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      return done(Object.assign(new Error(`content encoding ${JSON.stringify(encoding.slice(0, 40))} not supported; send the body uncompressed`), { statusCode: 415 }), undefined)
    }
    // Invalid UTF-8 was read as U+FFFD, so what was hashed and audited was not what the client sent (found by
    // fuzzing). isUtf8 is strict (no overlong forms, no surrogates) and, with toString, cheaper than a fatal TextDecoder.
    if (!isUtf8(raw as Buffer)) return done(new UnreadableJsonBodyError('body is not valid UTF-8; send JSON encoded in UTF-8'), undefined)
    const body = (raw as Buffer).toString('utf8')
    parse(req, body, (err: Error | null, value?: unknown) => {
      if (err) return done(isJson(body) ? new UnreadableJsonBodyError(PROTOTYPE_MEMBER) : err, undefined)
      // JSON.parse kept the last of two same-named members; a proxy or log in front may have read the first.
      const twice = duplicateJsonKey(body, 'body')
      if (twice !== null) return done(new DuplicateJsonMemberError(twice), undefined)
      done(null, value)
    })
  })
}

/** Whether JSON.parse reads it (after the byte order mark the default parser skips too): then that parser refused it for a prototype member, not its syntax. */
function isJson(body: string): boolean {
  try {
    JSON.parse(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body)
    return true
  } catch {
    return false
  }
}
