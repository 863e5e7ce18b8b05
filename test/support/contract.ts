// Checks real responses against the OpenAPI document the gateway serves: the
// response's status must be one the document lists for that operation, and
// its body must validate against the schema listed for it (closed objects:
// a field the document does not show fails too).
import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'

// ajv-formats ships CommonJS with a default export; under NodeNext the callable sits on .default.
const addFormats = (addFormatsModule as unknown as { default: typeof addFormatsModule }).default ?? addFormatsModule

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> }

const pointerPart = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1')

export function responseChecker(doc: Doc) {
  const ajv = new Ajv({ strict: false, allErrors: true, discriminator: true, allowUnionTypes: true })
  ;(addFormats as unknown as (a: Ajv, f: string[]) => void)(ajv, ['uuid', 'email'])
  ajv.addSchema(doc as object, 'openapi')
  const checked = new Set<string>()
  return {
    /** Every `method path status` checked so far. */
    checked,
    /** Throws (naming the operation and the failing path) unless the response is the document's. */
    check(method: string, pathTemplate: string, res: { status: number; body: unknown; contentType?: string | null }): void {
      const operation = doc.paths[pathTemplate]?.[method]
      if (!operation) throw new Error(`${method} ${pathTemplate} is not in the document`)
      const response = operation.responses[String(res.status)]
      if (!response) throw new Error(`${method} ${pathTemplate} answered ${res.status}, which the document does not list: ${JSON.stringify(res.body)}`)
      const types = Object.keys(response.content ?? {})
      const type = types.find((t) => (res.contentType ?? 'application/json').startsWith(t))
      if (types.length > 0 && !type) throw new Error(`${method} ${pathTemplate} ${res.status}: content type ${res.contentType} is not one of ${types.join(', ')}`)
      if (type) {
        const ref = `openapi#/paths/${pointerPart(pathTemplate)}/${method}/responses/${res.status}/content/${pointerPart(type)}/schema`
        const validate = ajv.getSchema(ref)
        if (!validate) throw new Error(`no schema at ${ref}`)
        if (!validate(res.body)) {
          throw new Error(`${method} ${pathTemplate} ${res.status} does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body).slice(0, 2000)}`)
        }
      }
      checked.add(`${method} ${pathTemplate} ${res.status}`)
    },
  }
}
