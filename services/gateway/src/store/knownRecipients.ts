import type Database from 'better-sqlite3'

/**
 * Addresses each wallet sent to or approved, per chain, recorded when a
 * transaction reaches the node. Preflight compares new recipients with them
 * (first-time and lookalike warnings).
 */
export interface KnownRecipients {
  list(chainId: number, wallet: string): string[]
  add(chainId: number, wallet: string, address: string, nowMs: number): void
}

export function createKnownRecipients(db: Database.Database): KnownRecipients {
  const select = db.prepare<[number, string], { address: string }>('SELECT address FROM known_recipients WHERE chain_id = ? AND wallet = ? LIMIT 10000')
  const insert = db.prepare('INSERT OR IGNORE INTO known_recipients (chain_id, wallet, address, first_seen) VALUES (?, ?, ?, ?)')
  return {
    list: (chainId, wallet) => select.all(chainId, wallet.toLowerCase()).map((r) => r.address),
    add: (chainId, wallet, address, nowMs) => void insert.run(chainId, wallet.toLowerCase(), address.toLowerCase(), nowMs),
  }
}
