// The CommonJS wrapper's second argument is require.
const req = arguments[1]
module.exports = req('child_process')
