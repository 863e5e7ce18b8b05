// Borrowing the parent module's require.
module.exports = module.parent.require('fs')
