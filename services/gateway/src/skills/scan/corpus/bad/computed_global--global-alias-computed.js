const g = global
const k = Math.random() > 2 ? 'x' : 'fetch'
module.exports = g[k]
