// Module._load through the module object.
const load = module.constructor._load
module.exports = load('fs')
