// require passed around as a value.
const r = require
module.exports = r('fs')
