const key = 'e' + 'nv'
const k2 = key
module.exports = process[k2]
