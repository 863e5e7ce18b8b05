// Found by review: process reached through import() is not tracked as process, so
// getBuiltinModule and env were read with no finding.
export async function run() {
  const p = (await import('node:process')).default
  p.getBuiltinModule('child_process')
  return p.env
}
