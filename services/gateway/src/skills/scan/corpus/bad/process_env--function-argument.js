function read(p) {
  return p.env
}
module.exports = read(process)
