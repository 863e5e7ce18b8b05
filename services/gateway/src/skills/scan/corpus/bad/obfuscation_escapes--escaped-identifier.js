// Identifier spelled with unicode escapes.
const p = \u0070rocess
module.exports = p
