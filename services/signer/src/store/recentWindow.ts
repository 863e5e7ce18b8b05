/**
 * The times of one wallet's signatures, sorted, for the signer's rate
 * re-check: counting those after a moment is a binary search instead of a
 * COUNT(*) over the index, which costs as much as the signature itself once
 * a wallet has signed a few thousand times in the hour (bench/RESULTS.md).
 * Times older than `keepMs` before the latest bound asked for are dropped.
 */
export class RecentWindow {
  private times: number[]

  constructor(
    times: number[],
    private readonly keepMs: number,
  ) {
    this.times = [...times].sort((a, b) => a - b)
  }

  add(t: number): void {
    const i = upperBound(this.times, t)
    this.times.splice(i, 0, t)
  }

  /** Removes one occurrence of `t` (a signature that was replaced in place). */
  remove(t: number): void {
    const i = lowerBound(this.times, t)
    if (this.times[i] === t) this.times.splice(i, 1)
  }

  /** How many times are after `since` (strictly). */
  countAfter(since: number): number {
    const drop = lowerBound(this.times, since - this.keepMs)
    if (drop > 1024) this.times = this.times.slice(drop)
    return this.times.length - upperBound(this.times, since)
  }
}

/** First index whose value is >= t. */
function lowerBound(a: number[], t: number): number {
  let lo = 0
  let hi = a.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (a[mid]! < t) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** First index whose value is > t. */
function upperBound(a: number[], t: number): number {
  let lo = 0
  let hi = a.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (a[mid]! <= t) lo = mid + 1
    else hi = mid
  }
  return lo
}
