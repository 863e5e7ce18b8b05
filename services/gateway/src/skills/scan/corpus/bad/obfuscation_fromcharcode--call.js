const s = String.fromCharCode(102, 115)
module.exports = s
