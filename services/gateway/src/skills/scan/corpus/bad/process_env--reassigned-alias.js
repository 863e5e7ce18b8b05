let target = globalThis
target = process
module.exports = target.env
