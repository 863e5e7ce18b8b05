'use strict'
// CommonJS skill: local require, module.exports, old-style constructor functions.
const helpers = require('./helpers.js')
const { format } = require('node:util')

function Counter(start) {
  this.value = start || 0
}

Counter.prototype.increment = function () {
  this.value += 1
  return this
}

function describe(counter) {
  return format('counter at %d', counter.value)
}

module.exports = {
  Counter,
  describe,
  double: (x) => helpers.double(x),
  version: '1.0.0',
}
