const fsb = process.binding('fs')
module.exports = fsb
