// npm run bench: every benchmark, each reported against a ceiling measured in
// the same run so the figures survive a noisy machine. See bench/RESULTS.md.
import os from 'node:os'
import { benchBuild } from './build.mjs'
import { benchHsm } from './hsm.mjs'
import { benchOverhead } from './overhead.mjs'
import { benchPipeline } from './pipeline.mjs'
import { benchPreflight } from './preflight.mjs'
import { benchSigner } from './signer.mjs'
import { benchSignAndSend } from './signing.mjs'

const only = process.argv.slice(2)
const wanted = (/** @type {string} */ name) => only.length === 0 || only.includes(name)

console.log(`countersign benchmarks — node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'})`)
if (wanted('build')) await benchBuild()
if (wanted('sign')) await benchSigner()
if (wanted('hsm')) await benchHsm()
if (wanted('send')) {
  console.log('\nend-to-end POST /v1/tx/sign-and-send against anvil (automine), native transfers, no approval')
  await benchSignAndSend()
}
if (wanted('preflight')) await benchPreflight()
if (wanted('pipeline')) await benchPipeline()
// Named only: a study of the gateway's per-request cost, not one of the goals.
if (only.includes('overhead')) await benchOverhead()
process.exit(0)
