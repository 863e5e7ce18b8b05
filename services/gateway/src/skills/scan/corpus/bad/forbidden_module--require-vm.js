const vm = require('vm')
module.exports = vm.runInThisContext('process')
