// Loads the gateway's own code (or another skill) from outside this skill's root.
const config = require('../../services/gateway/dist/config.js')
module.exports = config
