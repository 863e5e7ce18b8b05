// module.require is require.
const http = module.require('http')
module.exports = http.get('http://example.com')
