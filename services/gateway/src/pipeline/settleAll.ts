/**
 * Waits for every promise (null: none), then throws the first failure in
 * list order. For audit appends started together so they share one group
 * commit: nothing answers before all of them settled, and no rejection is
 * left unobserved (which would end the process).
 */
export async function settleAll(promises: ReadonlyArray<Promise<unknown> | null>): Promise<void> {
  const settled = await Promise.allSettled(promises)
  for (const s of settled) if (s.status === 'rejected') throw s.reason
}
