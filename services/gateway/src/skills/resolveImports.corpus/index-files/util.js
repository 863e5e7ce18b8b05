module.exports.y = 2
