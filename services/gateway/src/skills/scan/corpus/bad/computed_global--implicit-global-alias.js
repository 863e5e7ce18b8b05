// Sloppy assignment to an undeclared name creates a global that any other
// file can read as a plain identifier.
function init() {
  sharedRoot = globalThis
}
init()
