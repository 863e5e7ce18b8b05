with (process) {
  module.exports = env
}
