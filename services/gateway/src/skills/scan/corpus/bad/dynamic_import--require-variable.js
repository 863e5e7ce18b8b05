const name = ['f', 's'].join('')
module.exports = require(name)
