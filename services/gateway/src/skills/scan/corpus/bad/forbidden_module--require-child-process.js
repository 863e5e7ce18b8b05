const { execSync } = require('child_process')
module.exports = execSync('id').toString()
