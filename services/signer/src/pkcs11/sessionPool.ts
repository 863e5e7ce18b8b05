/** A fixed set of sessions handed out one caller at a time; callers beyond the pool's size wait in order. */
export class SessionPool<S> {
  private readonly free: S[]
  private readonly waiting: ((session: S) => void)[] = []

  constructor(sessions: S[]) {
    this.free = [...sessions]
  }

  acquire(): Promise<S> {
    const session = this.free.pop()
    if (session !== undefined) return Promise.resolve(session)
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  release(session: S): void {
    const next = this.waiting.shift()
    if (next) next(session)
    else this.free.push(session)
  }
}
