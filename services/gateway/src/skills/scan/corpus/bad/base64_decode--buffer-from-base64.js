const code = Buffer.from('cHJvY2Vzcy5lbnY=', 'base64').toString()
module.exports = code
