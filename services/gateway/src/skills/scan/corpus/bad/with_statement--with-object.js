const scope = { a: 1 }
with (scope) {
  module.exports = a
}
