import { even } from './even.js'
export function run(input) {
  return even(input.n)
}
