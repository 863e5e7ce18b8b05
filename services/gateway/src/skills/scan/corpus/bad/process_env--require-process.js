module.exports = require('process').env
