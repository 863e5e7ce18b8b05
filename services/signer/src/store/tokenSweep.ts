/**
 * Deletes expired approval tokens every `everyMs`. A sweep that fails
 * (signer.db locked past its busy timeout, a full disk) is reported and runs
 * again next time; thrown from the timer it would end the signer.
 */
export function startTokenSweep(sweep: () => number, everyMs: number, onError: (err: Error) => void): () => void {
  const timer = setInterval(() => {
    try {
      sweep()
    } catch (err) {
      onError(err as Error)
    }
  }, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}
