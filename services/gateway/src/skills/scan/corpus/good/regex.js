// Regular expressions: parsing amounts and addresses out of free text.
const AMOUNT = /(?<value>\d+(?:\.\d+)?)\s*(?<unit>eth|gwei|wei)\b/giu
const ADDRESS = /\b0x[0-9a-f]{40}\b/gi
const ENS = /^(?:[a-z0-9-]+\.)+eth$/i

export function parseAmounts(text) {
  return [...text.matchAll(AMOUNT)].map((m) => ({
    value: m.groups.value,
    unit: m.groups.unit.toLowerCase(),
  }))
}

export function findAddresses(text) {
  return text.match(ADDRESS) ?? []
}

export function isEnsName(name) {
  return ENS.test(name)
}

export function redact(text) {
  return text.replace(ADDRESS, (a) => `${a.slice(0, 6)}\u2026${a.slice(-4)}`)
}
