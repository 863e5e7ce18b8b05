// constructor spelled with a template literal key.
const f = () => 0
f[`constructor`]('return 1')()
