// An HTTP answer from a hostile peer: a body sent as fast as the connection
// takes it, for tests of clients that must not read it all.
import type { ServerResponse } from 'node:http'

/**
 * Writes `fill` bytes in 64 KiB chunks to `res` (its head already written)
 * until the client goes away or `maxBytes` are out, then ends it; the bound
 * makes a client that reads everything fail its test instead of the machine.
 * Returns how many bytes have gone out so far.
 */
export function floodAnswer(res: ServerResponse, maxBytes: number, fill = 32): () => number {
  const chunk = Buffer.alloc(64 * 1024, fill)
  let sent = 0
  const pump = () => {
    while (!res.destroyed && sent < maxBytes) {
      sent += chunk.length
      if (!res.write(chunk)) return void res.once('drain', pump)
    }
    res.end()
  }
  pump()
  return () => sent
}
