const p = process
module.exports = p.env
