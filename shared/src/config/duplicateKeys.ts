/**
 * The path of the first member name that appears twice in one object of a
 * JSON text ("policy/maxValueWei"), or null. JSON.parse keeps the last of
 * them silently, so a file a reviewer reads as one thing would be loaded as
 * another; configuration files are refused instead. `text` must already be
 * valid JSON (parse it first: this only walks it).
 */
export function duplicateJsonKey(text: string, root = ''): string | null {
  interface Container {
    object: boolean
    path: string
    keys: Set<string>
    /** The member name just read (objects), or the element index (arrays). */
    at: string | number
    expectKey: boolean
  }
  const stack: Container[] = []
  const childPath = () => {
    const top = stack.at(-1)
    return top ? `${top.path}/${top.at}` : root
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '"') {
      let j = i + 1
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      const top = stack.at(-1)
      if (top?.object && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string
        if (top.keys.has(key)) return `${top.path}/${key}`
        top.keys.add(key)
        top.at = key
        top.expectKey = false
      }
      i = j
    } else if (c === '{' || c === '[') {
      stack.push({ object: c === '{', path: childPath(), keys: new Set(), at: 0, expectKey: c === '{' })
    } else if (c === '}' || c === ']') {
      stack.pop()
    } else if (c === ',') {
      const top = stack.at(-1)
      if (top?.object) top.expectKey = true
      else if (top) top.at = (top.at as number) + 1
    }
  }
  return null
}
