import type { FastifyInstance } from 'fastify'
import { validationErrorBody } from './errorBodies.js'
import { HttpError } from './errors.js'

/**
 * The first key that appears twice in one object of a JSON text already known
 * to be valid (it parsed), or null. JSON.parse keeps the last of them; a proxy,
 * a log or a firewall in front may read the first, and a signing request must
 * mean one thing to everyone who reads it. Keys compare as JSON.parse reads
 * them ("a" and "\u0061" are one key).
 */
const FEW_KEYS = 16

export function duplicateKeyOf(json: string): string | null {
  // One entry per open object (its keys so far: a list while it has a few,
  // cheaper than a Set, and a Set beyond, so that a body of one object with
  // thousands of keys costs no more than its length) or array (null).
  const open: Array<string[] | Set<string> | null> = []
  let keyNext = false
  const n = json.length
  for (let i = 0; i < n; i++) {
    const c = json.charCodeAt(i)
    if (c === 0x22 /* " */) {
      let end = i + 1
      let escaped = false
      for (; end < n; end++) {
        const d = json.charCodeAt(end)
        if (d === 0x5c /* \ */) {
          escaped = true
          end++
        } else if (d === 0x22) break
      }
      const keys = open[open.length - 1]
      if (keyNext && keys) {
        const key = escaped ? (JSON.parse(json.slice(i, end + 1)) as string) : json.slice(i + 1, end)
        if (Array.isArray(keys)) {
          if (keys.includes(key)) return key
          keys.push(key)
          if (keys.length > FEW_KEYS) open[open.length - 1] = new Set(keys)
        } else {
          if (keys.has(key)) return key
          keys.add(key)
        }
        keyNext = false
      }
      i = end
    } else if (c === 0x7b /* { */) {
      open.push([])
      keyNext = true
    } else if (c === 0x5b /* [ */) {
      open.push(null)
      keyNext = false
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop()
    } else if (c === 0x2c /* , */) {
      keyNext = open[open.length - 1] != null
    }
  }
  return null
}

/**
 * application/json bodies parsed as fastify does by default (the same
 * poisoning rules and errors), and refused with 400 in the validation shape
 * when an object has a key twice.
 */
export function installStrictJson(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    parse(req, body as string, (err: Error | null, value?: unknown) => {
      if (err) return done(err, undefined)
      const twice = duplicateKeyOf(body as string)
      if (twice !== null) {
        return done(new HttpError(400, validationErrorBody(`body has the key ${JSON.stringify(twice)} twice in one object; send each key once`)), undefined)
      }
      done(null, value)
    })
  })
}
