module.exports.x = 1
