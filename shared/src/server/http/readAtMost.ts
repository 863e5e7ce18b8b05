/**
 * A response body as text, or null when it is larger than `limit` bytes (by
 * its content-length, or as it streams in): the rest is not read, so an
 * endless or huge answer costs no more than `limit` bytes of memory. Only
 * fetch and TextDecoder: the TypeScript client, which runs wherever fetch
 * does, reads with it too.
 */
export async function readAtMost(res: Response, limit: number): Promise<string | null> {
  if (Number(res.headers.get('content-length')) > limit) {
    await res.body?.cancel().catch(() => undefined)
    return null
  }
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => undefined)
      return null
    }
    chunks.push(value)
  }
  const all = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    all.set(c, at)
    at += c.byteLength
  }
  return new TextDecoder().decode(all)
}
