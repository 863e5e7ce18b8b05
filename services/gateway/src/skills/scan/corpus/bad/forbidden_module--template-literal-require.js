// A template literal without expressions is still a constant.
const fs = require(`fs`)
module.exports = fs
