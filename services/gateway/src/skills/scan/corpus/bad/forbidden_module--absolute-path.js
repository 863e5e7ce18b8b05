import undici from '/usr/lib/node_modules/npm/node_modules/undici/index.js'
export default undici
