module.exports = process._linkedBinding('x')
