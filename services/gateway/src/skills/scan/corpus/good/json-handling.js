// JSON handling: parse untrusted input, copy it without prototype
// pollution, and serialise with bigint support.
'use strict'

function safeCopy(value) {
  if (Array.isArray(value)) return value.map(safeCopy)
  if (value === null || typeof value !== 'object') return value
  const out = Object.create(null)
  for (const key of Object.keys(value)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue
    out[key] = safeCopy(value[key])
  }
  return out
}

function parseIntent(text) {
  const raw = JSON.parse(text)
  const copy = safeCopy(raw)
  if (typeof copy.to !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(copy.to)) {
    throw new TypeError('to must be an address')
  }
  return copy
}

function stringify(value) {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v), 2)
}

const sample = parseIntent('{"to":"0x000000000000000000000000000000000000dEaD","value":"1000","meta":{"tags":["a","b"]}}')
module.exports = { parseIntent, stringify, sample: stringify({ ...sample, amount: 5n }) }
