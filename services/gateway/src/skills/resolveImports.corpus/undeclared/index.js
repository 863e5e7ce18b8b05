import { help } from './lib/helper.js'
export function run(input) {
  return help(input)
}
