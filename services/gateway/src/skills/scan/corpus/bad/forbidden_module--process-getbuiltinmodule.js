// Node 20.16+ loads built-ins without require or import.
const fs = process.getBuiltinModule('fs')
module.exports = fs.readFileSync('/etc/passwd')
