module.exports = 'vendored'
