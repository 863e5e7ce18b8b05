// In sloppy mode this is the global object.
var root = (function () { return this })()
module.exports = root
