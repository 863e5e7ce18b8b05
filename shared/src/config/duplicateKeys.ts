/** Objects with at most this many members keep their names in a list (cheaper than a Set for the few keys of an intent); larger ones in a Set. */
const FEW_KEYS = 16

interface Container {
  /** Member names so far (objects); null for arrays. */
  keys: string[] | Set<string> | null
  /** The member name just read (objects), or the element index (arrays): where the next container opened sits. */
  at: string | number
}

/**
 * The path of the first member name that appears twice in one object of a
 * JSON text ("policy/maxValueWei"), or null. JSON.parse keeps the last of
 * them silently, so what a reviewer, a proxy or a log reads as one thing
 * would be loaded or signed as another: configuration files and request
 * bodies are refused instead. Names compare as JSON.parse reads them ("a"
 * and "\u0061" are one). `text` must already be valid JSON (parse it first:
 * this only walks it). One pass over the text, whatever the objects' sizes;
 * it runs on every request body.
 */
export function duplicateJsonKey(text: string, root = ''): string | null {
  const open: Container[] = []
  let keyNext = false
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      let end = i + 1
      let escaped = false
      for (; end < n; end++) {
        const d = text.charCodeAt(end)
        if (d === 0x5c /* \ */) {
          escaped = true
          end++
        } else if (d === 0x22) break
      }
      const top = open[open.length - 1]
      if (keyNext && top?.keys) {
        const key = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end)
        if (seenBefore(top, key)) return `${root}${open.map((o) => (o === top ? '' : `/${o.at}`)).join('')}/${key}`
        top.at = key
        keyNext = false
      }
      i = end
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      open.push({ keys: c === 0x7b ? [] : null, at: 0 })
      keyNext = c === 0x7b
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop()
    } else if (c === 0x2c /* , */) {
      const top = open[open.length - 1]
      if (top?.keys) keyNext = true
      else if (top) top.at = (top.at as number) + 1
    }
  }
  return null
}

/** Records `key` in the object's names; true when it was there already. */
function seenBefore(object: Container, key: string): boolean {
  const keys = object.keys!
  if (Array.isArray(keys)) {
    if (keys.includes(key)) return true
    keys.push(key)
    if (keys.length > FEW_KEYS) object.keys = new Set(keys)
    return false
  }
  if (keys.has(key)) return true
  keys.add(key)
  return false
}
