import dep from 'dep'
import legacy from 'legacy'
import tool from '@scope/tool'
import { createRequire as unusedName } from 'node:module'
const vendored = require('./vendor/pkg')
export function run() {
  return [dep, legacy, tool, vendored, typeof unusedName]
}
