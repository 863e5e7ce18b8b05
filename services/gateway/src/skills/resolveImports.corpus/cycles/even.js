import { odd } from './odd.js'
export function even(n) {
  return n === 0 ? true : odd(n - 1)
}
