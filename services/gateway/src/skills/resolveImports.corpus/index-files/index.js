const lib = require('./lib')
const table = require('./table')
const util = require('./util')
const nested = require('./data')
module.exports.run = () => lib.x + table.length + util.y + nested.z
