module.exports = process.env.HOME
