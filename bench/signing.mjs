// End-to-end sign-and-send against anvil with 1 and 8 wallets, and the
// helpers the signer benchmarks share (signer.mjs, hsm.mjs).
import { randomUUID } from 'node:crypto'
import { privateKeyToAccount } from 'viem/accounts'
import { fmt, nth, ratio } from './lib.mjs'
import { devKeys, startAnvil, startStack } from './stack.mjs'

const now = () => Math.floor(Date.now() / 1000)

/**
 * A native transfer of 1000 + n wei from `wallet` to 0x…bEEF on Base.
 * @param {import('viem').Address} wallet
 * @param {number} n
 * @returns {import('@countersign/shared').TxIntent}
 */
export function transferIntent(wallet, n) {
  return {
    version: '1',
    id: randomUUID(),
    timestamp: now(),
    chain: { type: 'evm', chainId: 8453 },
    wallet: { address: wallet },
    action: { type: 'transfer_native', to: '0x000000000000000000000000000000000000bEEF', amount: String(1000 + n) },
    constraints: { maxGasWei: '100000000000000000', deadline: now() + 3600, maxSlippageBps: 0 },
  }
}

/**
 * Runs `task` with `concurrency` workers for `ms`; returns completions per second.
 * @param {(worker: number, done: number) => Promise<unknown>} task called with the worker's index and the completions so far
 * @param {{ concurrency: number, ms: number }} opts
 * @returns {Promise<number>}
 */
export async function throughput(task, { concurrency, ms }) {
  let done = 0
  const end = Date.now() + ms
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (Date.now() < end) {
        await task(w, done)
        done++
      }
    }),
  )
  return done / ((performance.now() - started) / 1000)
}

/**
 * @param {{ ms?: number }} [opts]
 * @returns {Promise<{ [wallets: number]: number }>} transfers per second by number of wallets
 */
export async function benchSignAndSend({ ms = 6000 } = {}) {
  /** @type {{ [wallets: number]: number }} */
  const results = {}
  for (const wallets of [1, 8]) {
    const anvil = await startAnvil()
    const keys = devKeys.slice(0, wallets)
    const addresses = keys.map((k) => privateKeyToAccount(k).address)
    const stack = await startStack({ keys, rpcUrl: anvil.rpcUrl, policy: { maxTxPerHour: 1_000_000_000, requireApprovalAbove: { valueWei: '1000000000000000000000' } } })
    try {
      let failures = 0
      const rate = await throughput(
        async (w, n) => {
          const r = await fetch(`${stack.url}/v1/tx/sign-and-send`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ intent: transferIntent(nth(addresses, w % wallets), n) }),
          })
          const body = /** @type {Partial<import('@countersign/shared').SignAndSendResult>} */ (await r.json())
          if (r.status !== 200 || !body.broadcast) failures++
        },
        { concurrency: 8, ms },
      )
      results[wallets] = rate
      console.log(`  sign-and-send, ${wallets} wallet${wallets > 1 ? 's' : ' '}, 8 clients   ${fmt(rate, 1).padStart(7)} tx/s  (failures ${failures})`)
      if (failures) throw new Error('sign-and-send benchmark saw failures')
    } finally {
      await stack.stop()
      anvil.stop()
    }
  }
  console.log(`  ratio 8 wallets / 1 wallet              ${fmt(ratio(results[8] ?? NaN, results[1] ?? NaN), 2)}x (one wallet is sequential by design)`)
  return results
}
