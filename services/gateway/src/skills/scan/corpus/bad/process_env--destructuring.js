const { env } = process
module.exports = env.SECRET
