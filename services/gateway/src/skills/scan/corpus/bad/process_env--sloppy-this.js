// In sloppy mode a plain call gets the global object as this.
function leak() {
  return this.process.env
}
module.exports = leak()
