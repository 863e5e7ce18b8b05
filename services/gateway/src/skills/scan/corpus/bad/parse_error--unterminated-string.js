const s = 'never closed
module.exports = s
