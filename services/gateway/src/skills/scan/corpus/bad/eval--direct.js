// Plain direct eval of a string.
const result = eval('1 + 1')
module.exports = result
