import { even } from './even.js'
import { run } from './index.js'
export function odd(n) {
  return n === 0 ? false : even(n - 1) && typeof run === 'function'
}
