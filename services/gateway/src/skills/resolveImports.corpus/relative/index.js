import { a } from './lib/a.js'
export { b } from './lib/b.js'
export async function run() {
  const { c } = await import('./lib/c.js')
  return a + c
}
