// Any function's constructor is Function.
const f = (() => {}).constructor('return process')()
module.exports = f
