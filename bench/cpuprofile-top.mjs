// node bench/cpuprofile-top.mjs file.cpuprofile [n]: where a --cpu-prof
// profile's samples went, by function (self time) and by package or source
// folder, as shares of the busy (non-idle) samples.
import { readFileSync } from 'node:fs'

const [file, top = '25'] = process.argv.slice(2)
if (!file) {
  console.error('usage: node bench/cpuprofile-top.mjs file.cpuprofile [n]')
  process.exit(2)
}
/** @typedef {{ id: number, callFrame: { functionName: string, url: string, lineNumber: number } }} ProfileNode */
/** @type {{ nodes: ProfileNode[], samples: number[] }} a V8 CPU profile, as far as it is read here */
const profile = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
/** @type {Map<number, number>} node id -> samples */
const selfCount = new Map()
for (const id of profile.samples) selfCount.set(id, (selfCount.get(id) ?? 0) + 1)

/**
 * node_modules/<pkg> or the repo folder (services/gateway/dist/routes …), else the raw url or the V8 category.
 * @param {string} url
 * @returns {string}
 */
function where(url) {
  if (!url) return '(native/V8)'
  const nm = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1]
  if (nm) return nm
  const repo = url.match(/\/((?:services\/[^/]+|shared)\/dist\/[^/]+)/)?.[1]
  if (repo) return repo
  return url.startsWith('node:') ? url : url.replace(/^file:\/\//, '')
}

/** @type {Map<string, number>} */
const fns = new Map()
/** @type {Map<string, number>} */
const places = new Map()
let busy = 0
for (const [id, count] of selfCount) {
  const node = byId.get(id)
  if (!node) throw new Error(`${file}: sample of node ${id}, which the profile does not list`)
  const { callFrame } = node
  if (callFrame.functionName === '(idle)' || callFrame.functionName === '(program)') continue
  busy += count
  const key = `${callFrame.functionName || '(anonymous)'}  ${where(callFrame.url)}:${callFrame.lineNumber + 1}`
  fns.set(key, (fns.get(key) ?? 0) + count)
  const place = callFrame.functionName === '(garbage collector)' ? '(garbage collector)' : where(callFrame.url)
  places.set(place, (places.get(place) ?? 0) + count)
}
const total = profile.samples.length
const idle = total - busy
const pct = (/** @type {number} */ n) => `${((100 * n) / busy).toFixed(1).padStart(5)} %`
console.log(`${file}: ${total} samples, ${((100 * idle) / total).toFixed(1)} % idle or (program); shares below are of the busy samples`)
console.log('\nby package / folder')
for (const [k, v] of [...places].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`  ${pct(v)}  ${k}`)
console.log('\nby function (self)')
for (const [k, v] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`  ${pct(v)}  ${k}`)
