// node bench/auditPrepare.mjs [tree …]: the cost of preparing a build's two
// audit events (validation, stamping, RFC 8785 canonicalisation; what every
// append does on the appending process's event loop), for this tree or for
// several built trees in alternating runs. Figures are the fastest of each
// tree's runs, as µs per build; no ceiling, since only the trees are compared.
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { root } from './lib.mjs'

const trees = process.argv.length > 2 ? process.argv.slice(2).map((t) => path.resolve(t)) : [root]
const RUNS = Number(process.env.AUDIT_PREPARE_RUNS ?? 5)
const PER_RUN = 200_000

// The two events a build appends, as routes/build.ts and policyGate.ts write them.
const intentId = '7f1c2d4e-1a2b-4c3d-9e8f-0123456789ab'
/** @returns {import('@countersign/shared').AuditAppend[]} */
const events = () => [
  { intentId, event: 'policy_evaluated', data: { decision: 'allow', reasons: [], reasonCodes: [], wallet: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' } },
  { intentId, event: 'tx_built', data: { txRequestHash: `0x${'ab'.repeat(32)}`, description: 'Transfer 5 USDC to 0x2222222222222222222222222222222222222222 on Base' } },
]

// Each tree's prepareEvent (typed as this tree's), and its fastest run so far in µs per build.
const measured = await Promise.all(
  trees.map(async (tree) => {
    /** @type {typeof import('../shared/dist/audit/prepareEvent.js')} */
    const { prepareEvent } = await import(pathToFileURL(path.join(tree, 'shared/dist/audit/prepareEvent.js')).href)
    return { tree, prepareEvent, best: Infinity }
  }),
)
const clock = () => Date.now()
for (let run = 0; run < RUNS; run++) {
  for (const m of measured) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < PER_RUN; i++) for (const e of events()) m.prepareEvent(e, clock)
    m.best = Math.min(m.best, Number(process.hrtime.bigint() - start) / PER_RUN / 1000)
  }
}
console.log(`audit events prepared per build (two), fastest of ${RUNS} alternating runs of ${PER_RUN.toLocaleString('en-US')}`)
for (const { tree, best } of measured) console.log(`  ${best.toFixed(2)} µs per build  ${tree}`)
