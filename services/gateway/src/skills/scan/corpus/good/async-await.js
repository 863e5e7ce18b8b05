// Async control flow: retries with backoff, timeouts via promises, for-await.
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

export async function withRetry(task, attempts = 3) {
  let lastError
  for (let i = 0; i < attempts; i++) {
    try {
      return await task(i)
    } catch (err) {
      lastError = err
      await sleep(2 ** i * 100)
    }
  }
  throw lastError
}

export async function withTimeout(promise, ms) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

export async function* pages(fetchPage) {
  let cursor = null
  do {
    const page = await fetchPage(cursor)
    yield* page.items
    cursor = page.next
  } while (cursor)
}

export async function collect(iterable) {
  const out = []
  for await (const item of iterable) out.push(item)
  return out
}
