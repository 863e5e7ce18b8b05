module.exports = require.main.require('fs')
