module.exports = process['env']
