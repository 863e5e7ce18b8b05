const copy = { ...process }
module.exports = copy.env
