const fs = process.mainModule.require('fs')
module.exports = fs
