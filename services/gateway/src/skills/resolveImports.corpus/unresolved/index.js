import './missing.js'
import './lib'
import 'not-installed'
import '#internal'
const x = require('./gone')
export function run() {
  return x
}
