// The promises API of fs through require.
const fsp = require('fs').promises
module.exports = fsp.readFile('/etc/hostname')
